package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisClusterExtension;
import io.tollgate.testing.RedisServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link DistributedExactnessTests} on a three-master Redis Cluster, with the default settings (batching per master). */
class ClusterExactnessIT extends DistributedExactnessTests {

    @RegisterExtension
    static final RedisClusterExtension redis = new RedisClusterExtension();

    @BeforeEach
    void flush() {
        redis.cluster().masters().forEach(master -> master.command("FLUSHALL"));
    }

    @Override
    void checkSpread() {
        for (RedisServer master : redis.cluster().masters()) {
            assertThat((Long) master.command("DBSIZE"))
                    .as("buckets on %s", master)
                    .isPositive();
        }
    }

    @Override
    RedisRateLimiter instance() {
        return Connections.connected(RedisRateLimiter.builder()
                .timeout(PATIENT)
                .clusterUris(redis.cluster().uris())
                .build());
    }

    @Override
    long redisMicros() {
        return redis.cluster().masters().get(0).timeMicros();
    }

    @Override
    String deployment() {
        return "cluster";
    }
}
