package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisClusterExtension;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Three limiter instances × 16 threads on a three-master Redis Cluster. */
class ClusterExactnessIT {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    @RegisterExtension
    static final RedisClusterExtension redis = new RedisClusterExtension();

    @BeforeEach
    void flush() {
        redis.cluster().masters().forEach(master -> master.command("FLUSHALL"));
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
                () -> redis.cluster().masters().get(0).timeMicros());

        System.out.println(result.report("cluster, one hot key"));
        result.assertNoKeyExceedsItsBound();
        assertThat(result.totalAdmitted()).isGreaterThan(result.totalBound() * 95 / 100);
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
                () -> redis.cluster().masters().get(0).timeMicros());

        System.out.println(result.report("cluster, 10 000 keys"));
        result.assertNoKeyExceedsItsBound();
        for (RedisServer master : redis.cluster().masters()) {
            assertThat((Long) master.command("DBSIZE")).as("keys on %s", master).isPositive();
        }
    }

    private RedisRateLimiter instance() {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .clusterUris(redis.cluster().uris())
                .build();
    }
}
