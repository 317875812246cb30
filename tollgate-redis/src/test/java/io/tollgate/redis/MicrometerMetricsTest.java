package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MicrometerMetricsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Policy TWO = Policy.of("two", Limit.of(2, Rate.perMinute(2)));

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private RedisRateLimiter limiter;

    @BeforeEach
    void connect() {
        if (!redis.server().isRunning()) {
            redis.server().restart();
        }
        redis.server().command("FLUSHALL");
        limiter = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(Duration.ofSeconds(2))
                .failurePolicy(FailurePolicy.ALLOW)
                .circuitBreaker(2, Duration.ofSeconds(10), Duration.ofSeconds(10))
                .metrics(MicrometerMetrics.of(registry))
                .build();
    }

    @AfterEach
    void close() {
        limiter.close();
        if (!redis.server().isRunning()) {
            redis.server().restart();
        }
    }

    @Test
    void countsDecisionsByPolicyOutcomeAndSource() {
        for (int i = 0; i < 5; i++) {
            limiter.tryAcquire("alice", TWO);
        }

        assertThat(count("tollgate.decisions", "policy", "two", "outcome", "allowed", "source", "redis"))
                .isEqualTo(2);
        assertThat(count("tollgate.decisions", "policy", "two", "outcome", "denied", "source", "redis"))
                .isEqualTo(1);
        assertThat(count("tollgate.decisions", "policy", "two", "outcome", "denied", "source", "deny_cache"))
                .isEqualTo(2);
        assertThat(count("tollgate.deny_cache.hits", "policy", "two")).isEqualTo(2);
    }

    @Test
    void timesRedisCallsWithPercentiles() {
        limiter.tryAcquire("alice", TWO);
        limiter.tryAcquire("bob", TWO);

        assertThat(registry.get("tollgate.redis.latency").timer().count()).isEqualTo(2);
        assertThat(registry.get("tollgate.redis.latency").timer().takeSnapshot().percentileValues())
                .hasSize(4);
    }

    @Test
    void countsFailuresByCauseAndShowsTheCircuitBreaker() {
        redis.server().kill();

        for (int i = 0; i < 4; i++) {
            limiter.tryAcquire("alice", TWO);
        }

        assertThat(count("tollgate.redis.failures", "cause", "unreachable")).isEqualTo(2);
        assertThat(count("tollgate.redis.failures", "cause", "circuit_open")).isEqualTo(2);
        assertThat(count("tollgate.decisions", "policy", "two", "outcome", "allowed", "source", "fallback"))
                .isEqualTo(4);
        assertThat(registry.get("tollgate.circuit.state").gauge().value()).isEqualTo(2.0);
    }

    private double count(String name, String... tags) {
        Counter counter = registry.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }
}
