package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Three limiter instances × 16 threads on one standalone Redis. */
class StandaloneExactnessIT {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @BeforeEach
    void flush() {
        redis.server().command("FLUSHALL");
    }

    @Test
    void threeInstancesOnOneHotKeyAdmitNoMoreThanCapacityPlusRefill() throws Exception {
        Policy policy = Policy.of("hot", Limit.of(500, Rate.perSecond(2_000)));

        DistributedExactness.Result result = DistributedExactness.run(
                this::instance,
                3,
                16,
                policy,
                1,
                Duration.ofSeconds(3),
                () -> redis.server().timeMicros());

        System.out.println(result.report("standalone, one hot key"));
        result.assertNoKeyExceedsItsBound();
        assertThat(result.totalAdmitted())
                .as("the key was hammered throughout, so nearly every token was taken")
                .isGreaterThan(result.totalBound() * 95 / 100);
    }

    @Test
    void threeInstancesOverTenThousandKeysAdmitNoMoreThanCapacityPlusRefillPerKey() throws Exception {
        Policy policy = Policy.of("spread", Limit.of(2, Rate.perSecond(1)));

        DistributedExactness.Result result = DistributedExactness.run(
                this::instance,
                3,
                16,
                policy,
                10_000,
                Duration.ofSeconds(3),
                () -> redis.server().timeMicros());

        System.out.println(result.report("standalone, 10 000 keys"));
        result.assertNoKeyExceedsItsBound();
        assertThat(result.totalAdmitted()).isPositive();
    }

    private RedisRateLimiter instance() {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .build();
    }
}
