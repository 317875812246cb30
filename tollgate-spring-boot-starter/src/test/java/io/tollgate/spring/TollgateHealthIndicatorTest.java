package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.LimiterOfItsOwn;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.FreePorts;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/** The health of the limiter: memory is always up; Redis is up while it answers, down with why otherwise. */
class TollgateHealthIndicatorTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @Test
    void inMemoryTheLimiterIsUp() {
        Health health = new TollgateHealthIndicator(InMemoryRateLimiter.create()).health();

        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).containsEntry("store", "memory");
    }

    @Test
    void anApplicationsOwnLimiterIsUpUnderItsOwnName() {
        InMemoryRateLimiter delegate = InMemoryRateLimiter.create();
        RateLimiter own = new LimiterOfItsOwn(delegate, "OwnLimiter");

        Health health = new TollgateHealthIndicator(own).health();

        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).containsEntry("store", "OwnLimiter");
    }

    @Test
    void onARedisThatAnswersTheLimiterIsUpWithItsCircuitClosed() {
        try (RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(Duration.ofMillis(500))
                .build()) {
            Health health = new TollgateHealthIndicator(limiter).health();

            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("store", "redis").containsEntry("circuit", "closed");
        }
    }

    @Test
    void onARedisNobodyListensAtTheLimiterIsDownSayingWhy() {
        try (RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri("redis://127.0.0.1:" + FreePorts.nobodyListens())
                .build()) {
            Health health = new TollgateHealthIndicator(limiter).health();

            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(String.valueOf(health.getDetails().get("reason"))).contains("not connected to Redis");
        }
    }
}
