package io.tollgate.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.tollgate.TimeSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Holds the limiter's one connection, and builds the Lettuce clients the limiter owns. A connection that
 * the limiter opens itself is attempted at once, and if Redis is not there yet, again every second in the
 * background, so that an application starts, and decides by its failure policy, while Redis is down. Once
 * connected, Lettuce reconnects by itself.
 *
 * <p>Thread-safe.
 */
final class RedisConnector implements AutoCloseable {

    static {
        Slf4jWithoutProvider.quiet(); // before Lettuce first logs
    }

    private static final Duration FIRST_ATTEMPT = Duration.ofSeconds(2);
    private static final Duration RETRY_EVERY = Duration.ofSeconds(1);
    /** How many times an attempt that lost the reason of its failure is made again at once. */
    private static final int REPEATS_OF_A_LOST_REASON = 2;

    private final String target;
    volatile String where;
    private final Supplier<CompletionStage<? extends StatefulConnection<byte[], byte[]>>> open;
    private final Function<StatefulConnection<byte[], byte[]>, RedisScriptingAsyncCommands<byte[], byte[]>> commandsOf;
    private final List<AutoCloseable> owned;
    /** Opens a pub/sub connection on the same client; null when the limiter was given a connection only. */
    Supplier<CompletionStage<StatefulRedisPubSubConnection<byte[], byte[]>>> openPubSub;

    private final ScheduledExecutorService retries;
    private volatile StatefulConnection<byte[], byte[]> connection;
    private volatile ClientResources resources;
    private volatile Partitions partitions;
    private volatile RedisScriptingAsyncCommands<byte[], byte[]> commands;
    private volatile boolean closed;
    private final ConnectionLog log;

    private RedisConnector(
            String target,
            Supplier<CompletionStage<? extends StatefulConnection<byte[], byte[]>>> open,
            Function<StatefulConnection<byte[], byte[]>, RedisScriptingAsyncCommands<byte[], byte[]>> commandsOf,
            List<AutoCloseable> owned) {
        this.target = target;
        this.where = target;
        this.open = open;
        this.commandsOf = commandsOf;
        this.owned = owned;
        this.log = new ConnectionLog(target, TimeSource.system());
        this.retries = open == null
                ? null
                : Executors.newSingleThreadScheduledExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "tollgate-redis-connect");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /** Uses a connection that is already open and belongs to the application. */
    static RedisConnector of(
            StatefulConnection<byte[], byte[]> connection, RedisScriptingAsyncCommands<byte[], byte[]> commands) {
        RedisConnector connector = new RedisConnector("an application's connection", null, c -> commands, List.of());
        connector.commands = commands;
        connector.resources = connection.getResources();
        connector.partitions = connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster
                ? cluster.getPartitions()
                : null;
        return connector;
    }

    /**
     * Opens a connection with {@code open}, waiting up to two seconds for the first attempt, then retrying in
     * the background; {@code owned} is closed with the connector.
     */
    static <C extends StatefulConnection<byte[], byte[]>> RedisConnector connecting(
            String target,
            Supplier<CompletionStage<C>> open,
            Function<C, RedisScriptingAsyncCommands<byte[], byte[]>> commandsOf,
            List<AutoCloseable> owned) {
        @SuppressWarnings("unchecked")
        Function<StatefulConnection<byte[], byte[]>, RedisScriptingAsyncCommands<byte[], byte[]>> anyCommands =
                connection -> commandsOf.apply((C) connection);
        RedisConnector connector = new RedisConnector(target, open::get, anyCommands, owned);
        CompletableFuture<Void> first = connector.attempt();
        try {
            first.get(FIRST_ATTEMPT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception notYet) {
            // attempt() has logged it and scheduled the next try
        }
        return connector;
    }

    /** Opens a connection on an application's client; closes only that connection. */
    static RedisConnector onClient(RedisClient client) {
        RedisConnector connector = connecting(
                "an application's client",
                () -> CompletableFuture.supplyAsync(() -> client.connect(ByteArrayCodec.INSTANCE)),
                StatefulRedisConnection::async,
                List.of());
        connector.openPubSub = () -> CompletableFuture.supplyAsync(() -> client.connectPubSub(ByteArrayCodec.INSTANCE));
        return connector;
    }

    /** Opens a connection on an application's cluster client; closes only that connection. */
    static RedisConnector onClusterClient(RedisClusterClient client) {
        RedisConnector connector = connecting(
                "an application's cluster client",
                () -> CompletableFuture.supplyAsync(() -> client.connect(ByteArrayCodec.INSTANCE)),
                StatefulRedisClusterConnection::async,
                List.of());
        connector.openPubSub = () -> CompletableFuture.supplyAsync(() -> client.connectPubSub(ByteArrayCodec.INSTANCE));
        return connector;
    }

    /**
     * Returns the commands of the open connection, waiting up to {@code maxWait} for one; null if there is
     * none by then.
     */
    RedisScriptingAsyncCommands<byte[], byte[]> awaitCommands(Duration maxWait) {
        long deadline = System.nanoTime() + maxWait.toNanos();
        RedisScriptingAsyncCommands<byte[], byte[]> open;
        while ((open = commands) == null && !closed && System.nanoTime() < deadline) {
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return open;
    }

    /**
     * Returns what opens a pub/sub connection on the limiter's client, or null when the limiter was given an
     * application's connection and has no client to open one with.
     */
    Supplier<CompletionStage<StatefulRedisPubSubConnection<byte[], byte[]>>> pubSub() {
        return openPubSub;
    }

    /** Returns the commands of the open connection, or null while there is none. */
    RedisScriptingAsyncCommands<byte[], byte[]> commands() {
        return commands;
    }

    /**
     * Returns the node that serves {@code key}, as {@code host:port}: on Redis Cluster, its slot's master as
     * the client last saw the topology; elsewhere, or while the slot's owner is unknown, {@link #target()}.
     */
    String nodeOf(byte[] key) {
        Partitions cluster = partitions;
        if (cluster == null) {
            return target;
        }
        RedisClusterNode node = cluster.getPartitionBySlot(SlotHash.getSlot(key));
        return node == null || node.getUri() == null ? target : RedisClients.hostAndPort(node.getUri());
    }

    /**
     * Returns why there is no connection, for messages: {@code not connected to Redis at HOST:PORT}, and the
     * reason the latest attempt failed, such as Redis's {@code WRONGPASS} answer.
     */
    String notConnected() {
        String reason = log.reason();
        return "not connected to Redis at " + target + (reason == null ? "" : ": " + reason);
    }

    /**
     * Returns where the buckets live, for the limiter's line at startup: {@code Redis at HOST:PORT (no TLS)},
     * a Sentinel master, the seeds of a Cluster, or what the application said of a client it gave.
     */
    String where() {
        return where;
    }

    /** Replaces {@link #where()} for a client or connection that the application gave, which it described. */
    void describedAs(String description) {
        where = description;
    }

    /** Returns the Lettuce resources (event loops) of the open connection, or null while there is none. */
    ClientResources connectionResources() {
        return resources;
    }

    /** Returns whether a connection is open. */
    boolean connected() {
        return commands != null;
    }

    /** Returns what this connector connects to, for messages. */
    String target() {
        return target;
    }

    private CompletableFuture<Void> attempt() {
        return attemptOnce(REPEATS_OF_A_LOST_REASON);
    }

    /**
     * One attempt to connect; again at once, up to {@code repeats} more times, while an attempt lost its reason:
     * Lettuce closes the channel of a failed handshake (a wrong password) before it reports why, and now and then
     * what it notices of the closed channel reaches the attempt first ({@code Connection closed prematurely}, or
     * {@code RedisHandshakeHandler not registered} once the channel's handlers are gone), which would tell the
     * operator nothing. (Measured on two busy cores: 1 to 3 attempts in 1 000 lost the reason; two
     * repeats make a lost reason about one in a hundred million.)
     */
    private CompletableFuture<Void> attemptOnce(int repeats) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        CompletionStage<? extends StatefulConnection<byte[], byte[]>> opening;
        try {
            opening = open.get();
        } catch (RuntimeException e) {
            failed(e, done);
            return done;
        }
        opening.whenComplete((opened, failure) -> {
            if (failure != null && repeats > 0 && !closed && closedDuringHandshake(failure)) {
                attemptOnce(repeats - 1).whenComplete((ignored, again) -> {
                    if (again == null) {
                        done.complete(null);
                    } else {
                        done.completeExceptionally(again);
                    }
                });
            } else if (failure != null) {
                failed(failure, done);
            } else if (closed) {
                opened.closeAsync();
                done.complete(null);
            } else {
                connection = opened;
                resources = opened.getResources();
                commands = commandsOf.apply(opened);
                partitions = opened instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster
                        ? cluster.getPartitions()
                        : null;
                log.connected();
                done.complete(null);
            }
        });
        return done;
    }

    private static boolean closedDuringHandshake(Throwable failure) {
        for (Throwable cause = failure; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
            if (cause instanceof RedisConnectionException
                    && "Connection closed prematurely".equals(cause.getMessage())) {
                return true;
            }
            if (cause instanceof IllegalStateException
                    && "RedisHandshakeHandler not registered".equals(cause.getMessage())) {
                return true;
            }
        }
        return false;
    }

    private void failed(Throwable failure, CompletableFuture<Void> done) {
        if (closed) {
            done.completeExceptionally(failure);
            return;
        }
        log.failed(failure); // first: whoever waits for this attempt reads the reason
        done.completeExceptionally(failure);
        retries.schedule(this::attempt, RETRY_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        closed = true;
        if (retries != null) {
            retries.shutdownNow();
        }
        StatefulConnection<byte[], byte[]> open = connection;
        if (open != null) {
            open.close();
        }
        for (AutoCloseable resource : owned) {
            try {
                resource.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the Redis client failed", e);
            }
        }
    }
}
