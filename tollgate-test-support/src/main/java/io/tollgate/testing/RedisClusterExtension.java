package io.tollgate.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a real Redis Cluster of three masters for the tests of one class. Register it as a static field,
 * like {@link RedisExtension}, and connect a cluster client to {@code cluster().uris()}.
 */
public final class RedisClusterExtension implements BeforeAllCallback, AfterAllCallback {

    private final int masters;
    private RedisCluster cluster;

    /** Runs a cluster of three masters. */
    public RedisClusterExtension() {
        this(3);
    }

    /** Runs a cluster of {@code masters} masters. */
    public RedisClusterExtension(int masters) {
        this.masters = masters;
    }

    /**
     * Returns the running cluster.
     *
     * @throws IllegalStateException before the extension has started it (register it as a static field)
     */
    public RedisCluster cluster() {
        if (cluster == null) {
            throw new IllegalStateException(
                    "the Redis cluster is not running: register RedisClusterExtension as a static field");
        }
        return cluster;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        cluster = RedisCluster.start(masters);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }
}
