package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisExtension;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A plain program on tollgate-redis and nothing else (no logging library, no Micrometer), in a JVM of its
 * own: it decides on Redis and says one line about where its buckets live, and nothing prints SLF4J's
 * warnings about a missing binding.
 */
@Timeout(60)
@Isolated // alone on the machine: its bounds hold for a machine not busy with other tests
class PlainProgramIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @Test
    void aPlainProgramIsQuiet() throws Exception {
        Process program = ForkedJvm.of(PlainProgram.class, redis.server().uri()).start();
        assertThat(program.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String out = new String(program.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        List<String> err = new String(program.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)
                .lines()
                .toList();

        assertThat(program.exitValue()).as("exit status; stderr: %s", err).isZero();
        assertThat(out).isEqualTo("allowed true, remaining 9" + System.lineSeparator());
        assertThat(err).noneMatch(line -> line.contains("SLF4J"));
        assertThat(err)
                .filteredOn(line -> !line.startsWith("INFO: ") && !line.contains("io.tollgate.redis"))
                .as("nothing but Tollgate's own lines (java.util.logging prints each in two)")
                .isEmpty();
    }
}
