package io.tollgate.redis;

import io.tollgate.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link RedisDifferentialProperties} on the installed Redis (7.x here). */
class RedisDifferentialTest extends RedisDifferentialProperties {

    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
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
