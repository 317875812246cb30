package io.tollgate.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a real standalone {@code redis-server} for the tests of one class. Register it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisExtension redis = new RedisExtension();
 *
 * @Test
 * void talksToRedis() {
 *     RedisClient client = RedisClient.create(redis.server().uri());
 *     ...
 * }
 * }</pre>
 *
 * <p>The server starts before the first test and stops after the last; tests that need an empty server
 * send {@code FLUSHALL} through {@link RedisServer#command}.
 */
public final class RedisExtension implements BeforeAllCallback, AfterAllCallback {

    private final String[] arguments;
    private RedisServer server;

    /** Runs a server with the given extra {@code redis-server} arguments, if any. */
    public RedisExtension(String... arguments) {
        this.arguments = arguments.clone();
    }

    /**
     * Returns the running server.
     *
     * @throws IllegalStateException before the extension has started it (register it as a static field)
     */
    public RedisServer server() {
        if (server == null) {
            throw new IllegalStateException(
                    "the Redis server is not running: register RedisExtension as a static field");
        }
        return server;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        server = RedisServer.start(arguments);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server != null) {
            server.close();
            server = null;
        }
    }
}
