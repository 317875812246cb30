package io.tollgate.redis;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.lang.System.Logger.Level;
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
 * Holds the limiter's one connection. A connection that the limiter opens itself is attempted at once,
 * and if Redis is not there yet, again every second in the background, so that an application starts, and
 * decides by its failure policy, while Redis is down. Once connected, Lettuce reconnects by itself.
 *
 * <p>Thread-safe.
 */
final class RedisConnector implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RedisRateLimiter.class.getName());
    private static final Duration FIRST_ATTEMPT = Duration.ofSeconds(2);
    private static final Duration RETRY_EVERY = Duration.ofSeconds(1);

    private final String target;
    private final Supplier<CompletionStage<? extends StatefulConnection<byte[], byte[]>>> open;
    private final Function<StatefulConnection<byte[], byte[]>, RedisScriptingAsyncCommands<byte[], byte[]>> commandsOf;
    private final List<AutoCloseable> owned;
    private final ScheduledExecutorService retries;
    private volatile StatefulConnection<byte[], byte[]> connection;
    private volatile Partitions partitions;
    private volatile RedisScriptingAsyncCommands<byte[], byte[]> commands;
    private volatile boolean closed;

    private RedisConnector(
            String target,
            Supplier<CompletionStage<? extends StatefulConnection<byte[], byte[]>>> open,
            Function<StatefulConnection<byte[], byte[]>, RedisScriptingAsyncCommands<byte[], byte[]>> commandsOf,
            List<AutoCloseable> owned) {
        this.target = target;
        this.open = open;
        this.commandsOf = commandsOf;
        this.owned = owned;
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

    /** Returns the commands of the open connection, or null while there is none. */
    RedisScriptingAsyncCommands<byte[], byte[]> commands() {
        return commands;
    }

    /**
     * Returns the node that serves {@code key}: on Redis Cluster, the id of its slot's master as the
     * client last saw the topology; elsewhere, or while the slot's owner is unknown, the empty string.
     */
    String nodeOf(byte[] key) {
        Partitions cluster = partitions;
        if (cluster == null) {
            return "";
        }
        RedisClusterNode node = cluster.getPartitionBySlot(SlotHash.getSlot(key));
        return node == null ? "" : node.getNodeId();
    }

    /** Returns what this connector connects to, for messages. */
    String target() {
        return target;
    }

    private CompletableFuture<Void> attempt() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        CompletionStage<? extends StatefulConnection<byte[], byte[]>> opening;
        try {
            opening = open.get();
        } catch (RuntimeException e) {
            failed(e, done);
            return done;
        }
        opening.whenComplete((opened, failure) -> {
            if (failure != null) {
                failed(failure, done);
            } else if (closed) {
                opened.closeAsync();
                done.complete(null);
            } else {
                connection = opened;
                commands = commandsOf.apply(opened);
                partitions = opened instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster
                        ? cluster.getPartitions()
                        : null;
                LOG.log(Level.INFO, "Tollgate connected to Redis at {0}", target);
                done.complete(null);
            }
        });
        return done;
    }

    private void failed(Throwable failure, CompletableFuture<Void> done) {
        done.completeExceptionally(failure);
        if (closed) {
            return;
        }
        LOG.log(
                Level.WARNING,
                "Tollgate cannot connect to Redis at {0} ({1}); deciding by the failure policy, retrying every second",
                target,
                TokenBucketScript.unwrap(failure).getMessage());
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
