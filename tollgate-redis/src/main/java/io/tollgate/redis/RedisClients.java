package io.tollgate.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.tollgate.redis.internal.RedisSettings;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The ways a limiter reaches Redis: the clients Tollgate creates and owns for a URI (standalone, TLS or Sentinel)
 * or Cluster seeds, with the options a limiter needs, and the application's own connections and clients. Stateless.
 */
final class RedisClients {

    static {
        Slf4jWithoutProvider.quiet(); // before Lettuce first logs
    }

    /**
     * Lettuce's own command timeout, for clients the limiter creates: not the time budget (the limiter
     * enforces that itself), but a bound on how long a command that nobody waits for any more stays queued
     * on a hung connection. Shorter would also cut off Lettuce's handshake and topology commands.
     */
    private static final TimeoutOptions STALE_COMMANDS = TimeoutOptions.enabled(Duration.ofSeconds(5));

    private RedisClients() {}

    /**
     * Connects as {@code settings} say, and waits as {@link RedisRateLimiter.Builder#build} says.
     *
     * @throws IllegalStateException unless exactly one way to reach Redis was given; or if Redis is required at
     *     start and cannot be reached, saying why
     */
    static RedisConnector connect(RedisLimiterSettings<?> settings) {
        long given = Stream.of(
                        settings.uri,
                        settings.clusterUris,
                        settings.redisUri,
                        settings.clusterRedisUris,
                        settings.client,
                        settings.clusterClient,
                        settings.connection,
                        settings.clusterConnection)
                .filter(Objects::nonNull)
                .count();
        if (given != 1) {
            throw new IllegalStateException("give exactly one of uri, clusterUris, clusterRedisUris, client,"
                    + " clusterClient, connection or clusterConnection; " + given + " were given");
        }
        RedisConnector connector = connector(settings);
        if (settings.description != null) {
            connector.describedAs(settings.description);
        }
        if (settings.requireRedisAtStart && !connector.connected()) {
            connector.close();
            throw new IllegalStateException(
                    "Redis is required at start (requireRedisAtStart), but it could not be reached: "
                            + connector.notConnected());
        }
        return connector;
    }

    /**
     * Returns the connector to the one way to reach Redis that {@code settings} were given: a connection or a
     * client of the application's, or a client created here for a URI or Cluster seeds, with the credentials given
     * apart.
     *
     * @throws IllegalArgumentException if a URI is not a Redis URI
     */
    static RedisConnector connector(RedisLimiterSettings<?> settings) {
        if (settings.connection != null) {
            return RedisConnector.of(settings.connection, settings.connection.async());
        }
        if (settings.clusterConnection != null) {
            return RedisConnector.of(settings.clusterConnection, settings.clusterConnection.async());
        }
        if (settings.client != null) {
            return RedisConnector.onClient(settings.client);
        }
        if (settings.clusterClient != null) {
            return RedisConnector.onClusterClient(settings.clusterClient);
        }
        Credentials credentials =
                settings.password == null ? null : new Credentials(settings.username, settings.password);
        if (settings.redisUri != null) {
            return toUri(withCredentials(settings.redisUri, credentials), settings.sslOptions);
        }
        if (settings.clusterRedisUris != null) {
            return toCluster(
                    settings.clusterRedisUris.stream()
                            .map(seed -> withCredentials(seed, credentials))
                            .toList(),
                    settings.sslOptions);
        }
        return settings.uri != null
                ? toUri(redisUri(settings.uri, credentials), settings.sslOptions)
                : toCluster(
                        settings.clusterUris.stream()
                                .map(seed -> redisUri(seed, credentials))
                                .toList(),
                        settings.sslOptions);
    }

    /**
     * Creates a client for the Redis at {@code uri} (standalone, TLS or Sentinel) and connects it: commands
     * are rejected at once while disconnected, and reconnecting is tried at least every half second.
     *
     * @throws IllegalArgumentException if uri is not a Redis URI
     */
    static RedisConnector toUri(RedisURI redisUri, SslOptions ssl) {
        ClientResources resources = resources();
        RedisClient created = RedisClient.create(resources, redisUri);
        ClientOptions.Builder options = ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(socket())
                .timeoutOptions(STALE_COMMANDS);
        if (ssl != null) {
            options.sslOptions(ssl);
        }
        created.setOptions(options.build());
        RedisConnector connector = RedisConnector.connecting(
                hostAndPort(redisUri),
                () -> created.connectAsync(ByteArrayCodec.INSTANCE, redisUri),
                StatefulRedisConnection::async,
                List.of(created::shutdown, resources::shutdown));
        connector.openPubSub = () ->
                created.connectPubSubAsync(ByteArrayCodec.INSTANCE, redisUri).thenApply(pubSub -> pubSub);
        connector.where = redisUri.getSentinels().isEmpty()
                ? "Redis at " + hostAndPort(redisUri) + tls(redisUri)
                : "Redis Sentinel master '" + redisUri.getSentinelMasterId() + "' via "
                        + String.join(
                                ", ",
                                redisUri.getSentinels().stream()
                                        .map(RedisClients::hostAndPort)
                                        .toList())
                        + tls(redisUri);
        return connector;
    }

    /**
     * Creates a client for the Redis Cluster reachable through any of {@code uris} and connects it; the
     * topology is refreshed every five seconds and on every sign of a change.
     *
     * @throws IllegalArgumentException if a URI is not a Redis URI
     */
    static RedisConnector toCluster(List<RedisURI> seeds, SslOptions ssl) {
        ClientResources resources = resources();
        RedisClusterClient created = RedisClusterClient.create(resources, seeds);
        ClusterClientOptions.Builder options = ClusterClientOptions.builder();
        if (ssl != null) {
            options.sslOptions(ssl);
        }
        created.setOptions(options
                // Not REJECT_COMMANDS: node connections open lazily, and would reject the first command.
                .socketOptions(socket())
                .timeoutOptions(STALE_COMMANDS)
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .enablePeriodicRefresh(Duration.ofSeconds(5))
                        .build())
                .build());
        // A cluster client loads the topology before it connects, which only its blocking connect() does.
        RedisConnector connector = RedisConnector.connecting(
                "cluster " + seeds.stream().map(RedisClients::hostAndPort).toList(),
                () -> CompletableFuture.supplyAsync(() -> created.connect(ByteArrayCodec.INSTANCE)),
                StatefulRedisClusterConnection::async,
                List.of(created::shutdown, resources::shutdown));
        connector.openPubSub =
                () -> CompletableFuture.supplyAsync(() -> created.connectPubSub(ByteArrayCodec.INSTANCE));
        connector.where = "Redis Cluster via "
                + String.join(
                        ", ", seeds.stream().map(RedisClients::hostAndPort).toList()) + tls(seeds.get(0));
        return connector;
    }

    private static String tls(RedisURI uri) {
        return uri.isSsl() ? " (TLS)" : " (no TLS)";
    }

    private static ClientResources resources() {
        return ClientResources.builder()
                .reconnectDelay(
                        Delay.exponential(Duration.ofMillis(10), Duration.ofMillis(500), 2, TimeUnit.MILLISECONDS))
                .build();
    }

    private static SocketOptions socket() {
        return SocketOptions.builder().connectTimeout(Duration.ofSeconds(1)).build();
    }

    /** Returns {@code host:port} of {@code uri}, as messages name a node. */
    static String hostAndPort(RedisURI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }

    /** A user and password given apart from the URIs; the user null for the default. */
    record Credentials(String username, char[] password) {}

    /**
     * Parses a Redis URI, with {@code credentials} (or null) in place of any it holds.
     *
     * @throws IllegalArgumentException if it is not a Redis URI, naming it with its password masked
     */
    static RedisURI redisUri(String text, Credentials credentials) {
        RedisURI uri;
        try {
            uri = RedisURI.create(text);
        } catch (RuntimeException e) {
            // named masked: the URI may hold a password, and so may Lettuce's message, which repeats it
            throw new IllegalArgumentException("invalid Redis URI '" + RedisSettings.masked(text) + "'", e);
        }
        return withCredentials(uri, credentials);
    }

    /** Returns {@code uri}, with {@code credentials} in place of any it holds; unchanged for null credentials. */
    static RedisURI withCredentials(RedisURI uri, Credentials credentials) {
        if (credentials != null) {
            if (credentials.username() == null) {
                uri.setAuthentication(credentials.password());
            } else {
                uri.setAuthentication(credentials.username(), credentials.password());
            }
        }
        return uri;
    }
}
