package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.LoggedLines;
import io.tollgate.fixtures.ManualTimeSource;
import java.text.MessageFormat;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/** What the log says while Redis refuses writes for want of memory: a line when it begins, one when it ends. */
@Isolated // it counts what a logger shared by the JVM says
class OutOfMemoryLogTest {

    @RegisterExtension
    final LoggedLines log = new LoggedLines(RedisRateLimiter.class);

    private final ManualTimeSource time = new ManualTimeSource();
    private final OutOfMemoryLog outOfMemory = new OutOfMemoryLog("Redis at 127.0.0.1:6379 (no TLS)", time);

    @Test
    void recognisesRedisRefusalOfAWriteForWantOfMemory() {
        assertThat(OutOfMemoryLog.isOutOfMemory("OOM command not allowed when used memory > 'maxmemory'."))
                .isTrue();
        assertThat(OutOfMemoryLog.isOutOfMemory(
                        "ERR Error running script (call to f_1a2b): @user_script:40: OOM command not allowed when"
                                + " used memory > 'maxmemory'."))
                .isTrue();
        assertThat(OutOfMemoryLog.isOutOfMemory("READONLY You can't write against a read only replica."))
                .isFalse();
        assertThat(OutOfMemoryLog.isOutOfMemory(null)).isFalse();
    }

    @Test
    void saysOnceThatRedisRefusesWritesHoweverManyItRefuses() {
        for (int i = 0; i < 1_000; i++) {
            outOfMemory.refused();
            time.advance(Duration.ofMillis(1));
        }

        assertThat(lines())
                .containsExactly("Redis at 127.0.0.1:6379 (no TLS) refuses writes: it is out of memory (maxmemory"
                        + " reached, and its policy evicts nothing); the failure policy decides until it has room."
                        + " Give it more memory, or a policy that evicts keys with an expiry (volatile-ttl): every"
                        + " Tollgate bucket has one; see docs/redis.md#sizing-redis");
        assertThat(outOfMemory.refusing()).isTrue();
    }

    @Test
    void writesBetweenRefusalsAtTheEdgeOfMaxmemoryAreOneEpisode() {
        for (int i = 0; i < 100; i++) {
            outOfMemory.refused();
            time.advance(Duration.ofMillis(50));
            outOfMemory.answered();
            time.advance(Duration.ofMillis(50));
        }

        assertThat(lines()).hasSize(1);
        assertThat(outOfMemory.refusing()).isTrue();
    }

    @Test
    void saysRedisTakesWritesAgainOnceItWroteEveryDecisionForTheQuietPeriod() {
        outOfMemory.refused();
        time.advance(Duration.ofSeconds(3));
        outOfMemory.refused();
        time.advance(Duration.ofSeconds(9));
        outOfMemory.answered();
        time.advance(Duration.ofSeconds(1));

        outOfMemory.answered();
        outOfMemory.answered();

        assertThat(lines())
                .hasSize(2)
                .last()
                .isEqualTo("Redis at 127.0.0.1:6379 (no TLS) takes writes again: none refused for 10 s; it refused 2"
                        + " decisions for want of memory over 3 s, which the failure policy made");
        assertThat(outOfMemory.refusing()).isFalse();
    }

    @Test
    void aLaterEpisodeIsSaidAgainAndCountedFromZero() {
        outOfMemory.refused();
        time.advance(Duration.ofSeconds(11));
        outOfMemory.answered();

        time.advance(Duration.ofMinutes(5));
        outOfMemory.refused();
        time.advance(Duration.ofSeconds(10));
        outOfMemory.answered();

        assertThat(lines()).hasSize(4);
        assertThat(lines().get(2)).contains(" refuses writes: ");
        assertThat(lines().get(3)).contains("it refused 1 decisions for want of memory over 0 s");
    }

    @Test
    void saysNothingWhileRedisHasRoom() {
        outOfMemory.answered();

        assertThat(lines()).isEmpty();
        assertThat(outOfMemory.refusing()).isFalse();
    }

    private List<String> lines() {
        return log.lines().stream()
                .map(line -> MessageFormat.format(line.getMessage(), line.getParameters()))
                .toList();
    }
}
