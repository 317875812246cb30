package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Three limiter instances × 16 threads on one Redis deployment, which subclasses provide: on one hot key
 * and on 10 000 keys, no key admits more than capacity + rate × elapsed.
 */
@Isolated // alone on the machine: its bounds hold for a machine not busy with other tests
abstract class DistributedExactnessTests {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    static final Duration PATIENT = Duration.ofSeconds(5);

    /** Returns a new limiter instance with its own connection, as a separate server would have. */
    abstract RedisRateLimiter instance();

    /** Returns Redis's clock in microseconds. */
    abstract long redisMicros();

    /** Names the deployment in the reported figures. */
    abstract String deployment();

    /** Checks, after the run over 10 000 keys, that they were spread as the deployment should spread them. */
    void checkSpread() {}

    @Test
    void threeInstancesOnOneHotKeyAdmitNoMoreThanCapacityPlusRefill() throws Exception {
        Policy policy = Policy.of("hot", Limit.of(500, Rate.perSecond(2_000)));

        DistributedExactness.Result result =
                DistributedExactness.run(this::instance, 3, 16, policy, 1, Duration.ofSeconds(3), this::redisMicros);

        System.out.println(result.report(deployment() + ", one hot key"));
        result.assertNoKeyExceedsItsBound();
        assertThat(result.totalAdmitted())
                .as("the key was hammered throughout, so nearly every token was taken")
                .isGreaterThan(result.totalBound() * 95 / 100);
    }

    @Test
    void threeInstancesOverTenThousandKeysAdmitNoMoreThanCapacityPlusRefillPerKey() throws Exception {
        Policy policy = Policy.of("spread", Limit.of(2, Rate.perSecond(1)));

        DistributedExactness.Result result = DistributedExactness.run(
                this::instance, 3, 16, policy, 10_000, Duration.ofSeconds(3), this::redisMicros);

        System.out.println(result.report(deployment() + ", 10 000 keys"));
        result.assertNoKeyExceedsItsBound();
        assertThat(result.totalAdmitted()).isPositive();
        checkSpread();
    }
}
