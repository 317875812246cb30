package io.tollgate.redis;

import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.tollgate.redis.internal.TokenBucketScript;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * This limiter's announcement in Redis, and the count of live instances that it learns from it, so that the
 * {@code LOCAL} failure policy takes this instance's share of each limit while Redis cannot be asked: the limit
 * divided by the instances that were live when Redis last said. The ids announced are also whom a change made
 * outside a request waits for ({@link BucketChanges}).
 *
 * <p>Every {@link #INTERVAL} one call of {@code instances.lua} renews this instance's announcement, which lasts
 * {@link #LASTS}, drops those that ran out, and counts the rest: a timer's call, never one per decision. An
 * instance that stops announcing (it died, or lost Redis) drops out of the count within {@link #LASTS}; one that
 * closes withdraws at once. While Redis cannot be asked the last count stays in force.
 *
 * <p>Thread-safe.
 */
final class LiveInstances {

    /** How often an instance renews its announcement. */
    static final Duration INTERVAL = Duration.ofSeconds(1);

    /** How long an announcement lasts unless renewed: three intervals, so that one missed renewal drops no one. */
    static final Duration LASTS = INTERVAL.multipliedBy(3);

    private static final System.Logger LOG = System.getLogger(LiveInstances.class.getName());
    private static final byte[] ANNOUNCE = "announce".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] WITHDRAW = "withdraw".getBytes(StandardCharsets.US_ASCII);

    private final RedisConnector connector;
    private final byte[] key;
    private final byte[] id;
    private final IntConsumer counted;
    private final TokenBucketScript script = new TokenBucketScript(TokenBucketScript.INSTANCES_RESOURCE);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "tollgate-live-instances");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * @param key the sorted set of announcements
     * @param id this instance's id ({@link #newId()})
     * @param counted told each count of live instances that Redis answers, this one included
     */
    LiveInstances(RedisConnector connector, byte[] key, String id, IntConsumer counted) {
        this.connector = connector;
        this.key = key;
        this.counted = counted;
        this.id = id.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Returns a new instance id: the host's name (from {@code HOSTNAME}, as containers and most shells set it), the
     * process id and a random part, such as {@code api-7f9c/1234/5e0a1b2c}, so that an operator told which instances
     * did not confirm a reset can find them. No spaces: the channel of changes separates fields with them.
     */
    static String newId() {
        String host = System.getenv().getOrDefault("HOSTNAME", "");
        host = host.isBlank() ? "host" : host.replaceAll("[^A-Za-z0-9._-]", "_");
        byte[] random = new byte[4];
        new SecureRandom().nextBytes(random);
        return host + "/" + ProcessHandle.current().pid() + "/" + HexFormat.of().formatHex(random);
    }

    /**
     * Announces this instance now, waiting at most {@code firstWait} for the count, so that a limiter knows its
     * share before its first request, then every {@link #INTERVAL}.
     */
    void start(Duration firstWait) {
        if (connector.connected()) {
            try {
                call(ANNOUNCE).get(firstWait.toNanos(), TimeUnit.NANOSECONDS);
            } catch (Exception notYet) {
                // The timer tries again; meanwhile the count stays as it was.
            }
        }
        timer.scheduleWithFixedDelay(
                () -> call(ANNOUNCE), INTERVAL.toMillis(), INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Stops announcing and withdraws this instance, waiting at most {@code maxWait}. */
    void close(Duration maxWait) {
        timer.shutdownNow();
        if (connector.connected()) {
            try {
                call(WITHDRAW).get(maxWait.toNanos(), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                // Its announcement runs out on its own.
            }
        }
    }

    /** Announces or withdraws this instance, and passes the count on. */
    private CompletableFuture<Long> call(byte[] what) {
        RedisScriptingAsyncCommands<byte[], byte[]> redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.failedFuture(new IllegalStateException(connector.notConnected()));
        }
        byte[][] args = {id, TokenBucketScript.ascii(LASTS.toNanos() / 1_000), what};
        CompletableFuture<Long> live;
        try {
            live = script.run(redis, key, args).thenApply(reply -> (Long) reply.get(0));
        } catch (RuntimeException e) {
            live = CompletableFuture.failedFuture(e);
        }
        return live.whenComplete((count, failure) -> {
            if (failure != null) {
                LOG.log(Level.DEBUG, () -> "Tollgate: announcing this instance to Redis failed", failure);
            } else if (what == ANNOUNCE) {
                counted.accept(Math.toIntExact(count));
            }
        });
    }
}
