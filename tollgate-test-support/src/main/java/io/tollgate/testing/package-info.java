/**
 * Real {@code redis-server} processes for tests, on free ports: {@link io.tollgate.testing.RedisServer}
 * (standalone, Sentinel, TLS) and {@link io.tollgate.testing.RedisCluster}, with the JUnit 5 extensions
 * {@link io.tollgate.testing.RedisExtension} and {@link io.tollgate.testing.RedisClusterExtension}. Tests can
 * kill, freeze, restart and heal them. The binary comes from {@code PATH}, else from the embedded-redis jar.
 */
package io.tollgate.testing;
