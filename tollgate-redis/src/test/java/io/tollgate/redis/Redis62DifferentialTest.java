package io.tollgate.redis;

import io.tollgate.testing.RedisServer;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** {@link RedisDifferentialProperties} on Redis 6.2, the oldest Redis Tollgate supports. */
class Redis62DifferentialTest extends RedisDifferentialProperties {

    private static RedisServer server;

    @BeforeContainer
    static void start() {
        server = RedisServer.startEmbedded();
    }

    @AfterContainer
    static void stop() {
        server.close();
    }

    @Override
    RedisServer server() {
        return server;
    }
}
