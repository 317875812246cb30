package io.tollgate.redis;

import io.tollgate.testing.RedisServer;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** {@link RedisDifferentialProperties} on the installed Redis (7.x here). */
class RedisDifferentialTest extends RedisDifferentialProperties {

    private static RedisServer server;

    @BeforeContainer
    static void start() {
        server = RedisServer.start();
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
