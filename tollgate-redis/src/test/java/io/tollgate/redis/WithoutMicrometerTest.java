package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisExtension;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Micrometer is an optional dependency: the limiter must load and decide in a JVM that does not have it.
 * The test runs {@link #main} in such a JVM: this test's classpath without Micrometer's jars.
 */
@Isolated // it starts a JVM of its own and waits for it in a bounded time
class WithoutMicrometerTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @Test
    void decidesInAJvmWithoutMicrometer() throws Exception {
        // Everything this JVM has, on the class path as most applications run it (the tests run on the module path)
        String classpath = Stream.of(System.getProperty("jdk.module.path", ""), System.getProperty("java.class.path"))
                .flatMap(path -> Stream.of(path.split(File.pathSeparator)))
                .filter(entry -> !entry.isEmpty() && !entry.contains("micrometer"))
                .collect(Collectors.joining(File.pathSeparator));
        Process jvm = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        classpath,
                        WithoutMicrometerTest.class.getName(),
                        redis.server().uri())
                .redirectErrorStream(true)
                .start();
        assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(jvm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

        assertThat(output)
                .contains("micrometer: absent")
                .contains("allowed=true")
                .contains("degradation=null");
        assertThat(jvm.exitValue()).isZero();
    }

    /** Run in a JVM without Micrometer: prints whether Micrometer is there, and a decision made by Redis. */
    public static void main(String[] args) throws Exception {
        try {
            Class.forName("io.micrometer.core.instrument.MeterRegistry");
            System.out.println("micrometer: present");
        } catch (ClassNotFoundException expected) {
            System.out.println("micrometer: absent");
        }
        Policy policy = Policy.of("no-micrometer", Limit.of(5, Rate.perSecond(5)));
        try (RedisRateLimiter limiter = RedisRateLimiter.builder().uri(args[0]).build()) {
            Decision decision = limiter.tryAcquire("alice", policy);
            for (int attempt = 0; attempt < 100 && decision.degraded(); attempt++) {
                TimeUnit.MILLISECONDS.sleep(100); // a cold JVM may connect after the first decision
                decision = limiter.tryAcquire("alice", policy);
            }
            System.out.println(decision);
        }
    }
}
