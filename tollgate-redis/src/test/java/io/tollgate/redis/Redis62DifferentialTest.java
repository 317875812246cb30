package io.tollgate.redis;

import io.tollgate.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link RedisDifferentialProperties} on Redis 6.2, the oldest Redis Tollgate supports. */
class Redis62DifferentialTest extends RedisDifferentialProperties {

    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.startEmbedded();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Override
    RedisServer server() {
        return server;
    }
}
