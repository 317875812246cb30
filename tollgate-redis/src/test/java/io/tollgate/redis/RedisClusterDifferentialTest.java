package io.tollgate.redis;

import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The differential properties on a Redis Cluster of three masters: decisions, policy changes, waits, and
 * charges after the fact with refunds are the in-memory limiter's, whichever master holds the key.
 */
class RedisClusterDifferentialTest extends RedisDifferentialProperties {

    private static RedisCluster cluster;

    @BeforeAll
    static void start() {
        cluster = RedisCluster.start(3);
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Override
    RedisServer server() {
        return cluster.masters().get(0);
    }

    @Override
    RedisRateLimiter.Builder connect(RedisRateLimiter.Builder builder) {
        return builder.clusterUris(cluster.uris());
    }
}
