package io.tollgate.redis;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.tollgate.internal.guard.GuardedRateLimiter;
import io.tollgate.redis.internal.TokenBucketScript;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The channel through which the instances sharing a Redis tell each other of changes made to a key outside a
 * request (a reset, tokens given back), so that each forgets what it remembers of that key: its deny cache's
 * refusal, and the {@code LOCAL} fallback's copy of the bucket.
 *
 * <p><b>On the wire.</b> Redis pub/sub, channel {@code PREFIX + "changes"} ({@code tollgate:changes}), one
 * message per change: {@code INSTANCE POLICY:KEY}, the announcing instance's random id (so that it skips its own
 * messages), a space, the policy's name and the client key, in UTF-8 ({@code redis-cli SUBSCRIBE
 * tollgate:changes} shows them). Plain {@code PUBLISH} and {@code SUBSCRIBE} on standalone Redis, Sentinel and
 * Redis Cluster alike: on a Cluster a message published on any node reaches subscribers on every node over the
 * cluster bus, so one subscription on one node hears them all, and it need not follow slots as sharded pub/sub
 * ({@code SSUBSCRIBE}) would, one subscription per master re-planned at every topology change, for a channel
 * that carries only resets and refunds.
 *
 * <p><b>Missed messages.</b> Pub/sub delivers at most once: a message sent while the subscription is down is
 * lost. The subscription has a connection of its own, which Lettuce reconnects and resubscribes as it does the
 * limiter's; on every (re)subscription the limiter forgets every refusal it remembers ({@link
 * GuardedRateLimiter#changesMayHaveBeenMissed}), and no refusal is relied on longer than the deny cache's
 * ceiling in any case. A limiter given an application's connection rather than a client cannot open one: it
 * announces its own changes, and relies on the ceiling to hear of others'.
 *
 * <p>Thread-safe.
 */
final class BucketChanges implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(BucketChanges.class.getName());
    private static final Duration RETRY_EVERY = Duration.ofSeconds(1);

    private final RedisConnector connector;
    private final byte[] channel;
    private final String id;
    private final Supplier<CompletionStage<StatefulRedisPubSubConnection<byte[], byte[]>>> subscribing;
    private final ScheduledExecutorService retries;
    private volatile GuardedRateLimiter<?> listener;
    private volatile StatefulRedisPubSubConnection<byte[], byte[]> subscription;
    private final AtomicLong subscriptions = new AtomicLong();
    private volatile boolean closed;
    private volatile boolean toldNoPermission;

    /**
     * @param channel the channel's name
     * @param subscribing opens a pub/sub connection; null when the limiter has no client to open one with
     */
    BucketChanges(
            RedisConnector connector,
            byte[] channel,
            Supplier<CompletionStage<StatefulRedisPubSubConnection<byte[], byte[]>>> subscribing) {
        this.connector = connector;
        this.channel = channel;
        this.subscribing = subscribing;
        byte[] random = new byte[12];
        new SecureRandom().nextBytes(random);
        this.id = HexFormat.of().formatHex(random);
        this.retries = subscribing == null
                ? null
                : Executors.newSingleThreadScheduledExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "tollgate-redis-changes");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /**
     * Subscribes, telling {@code guard} of every change another instance announces, waiting at most {@code
     * firstWait} for the subscription when Redis is reachable; if it cannot subscribe yet, it tries again every
     * second in the background.
     */
    void listen(GuardedRateLimiter<?> guard, Duration firstWait) {
        this.listener = guard;
        if (subscribing == null) {
            LOG.log(
                    Level.INFO,
                    "Tollgate: given a connection rather than a client, this limiter cannot subscribe to {0}: it"
                            + " hears of other instances'' resets and refunds only through its deny cache''s"
                            + " ceiling",
                    text(channel));
            return;
        }
        CompletableFuture<Void> first = attempt();
        if (connector.connected()) {
            try {
                first.get(firstWait.toNanos(), TimeUnit.NANOSECONDS);
            } catch (Exception notYet) {
                // attempt() tries again in the background
            }
        }
    }

    /**
     * Publishes that the key's buckets under the policy changed; the stage completes once Redis has taken the
     * message, and fails if it cannot be sent.
     */
    CompletableFuture<Void> announce(String policyName, String key) {
        RedisScriptingAsyncCommands<byte[], byte[]> redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.failedFuture(new RedisConnectionException(connector.notConnected()));
        }
        byte[] message = (id + " " + policyName + ":" + key).getBytes(StandardCharsets.UTF_8);
        try {
            return ((BaseRedisAsyncCommands<byte[], byte[]>) redis)
                    .publish(channel, message)
                    .toCompletableFuture()
                    .thenApply(receivers -> null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Returns how many times the channel was (re)subscribed; for tests. */
    long subscriptions() {
        return subscriptions.get();
    }

    private CompletableFuture<Void> attempt() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        CompletionStage<StatefulRedisPubSubConnection<byte[], byte[]>> opening;
        try {
            opening = subscribing.get();
        } catch (RuntimeException e) {
            retry(e, done);
            return done;
        }
        opening.whenComplete((opened, failure) -> {
            if (failure != null) {
                retry(failure, done);
                return;
            }
            if (closed) {
                opened.closeAsync();
                done.complete(null);
                return;
            }
            opened.addListener(new Listener());
            subscription = opened;
            opened.async().subscribe(channel).whenComplete((ok, refused) -> {
                if (refused != null) {
                    opened.closeAsync();
                    subscription = null;
                    retry(refused, done);
                } else {
                    done.complete(null);
                }
            });
        });
        return done;
    }

    private void retry(Throwable failure, CompletableFuture<Void> done) {
        done.completeExceptionally(failure);
        if (closed) {
            return;
        }
        String refused = String.valueOf(TokenBucketScript.unwrap(failure).getMessage());
        if (refused.startsWith("NOPERM") && !toldNoPermission) {
            toldNoPermission = true; // once: the retries every second would say the same
            LOG.log(
                    Level.WARNING,
                    "Tollgate cannot subscribe to {0}: Redis answered {1}; other instances'' resets and refunds reach"
                            + " this one only through its deny cache''s ceiling until the Redis user may use the"
                            + " channel (ACL SETUSER <user> &{0})",
                    text(channel),
                    refused);
        }
        LOG.log(Level.DEBUG, () -> "Tollgate: subscribing to " + text(channel) + " failed; trying again", failure);
        try {
            retries.schedule(this::attempt, RETRY_EVERY.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RuntimeException shutDown) {
            // closed meanwhile
        }
    }

    @Override
    public void close() {
        closed = true;
        if (retries != null) {
            retries.shutdownNow();
        }
        StatefulRedisPubSubConnection<byte[], byte[]> open = subscription;
        if (open != null) {
            open.close();
        }
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Hears the channel: on Lettuce's I/O thread, so it only forgets, which is quick. */
    private final class Listener extends RedisPubSubAdapter<byte[], byte[]> {

        @Override
        public void subscribed(byte[] name, long count) {
            GuardedRateLimiter<?> guard = listener;
            if (guard != null) {
                guard.changesMayHaveBeenMissed(); // while unsubscribed, announcements went unheard
            }
            subscriptions.incrementAndGet(); // counted once what was missed is forgotten: a test may wait for it
        }

        @Override
        public void message(byte[] name, byte[] message) {
            String text = text(message);
            int space = text.indexOf(' ');
            int colon = text.indexOf(':', space + 1);
            if (space < 0 || colon < 0 || text.startsWith(id + " ")) {
                return; // not an announcement, or this instance's own
            }
            GuardedRateLimiter<?> guard = listener;
            if (guard != null) {
                guard.changedElsewhere(text.substring(space + 1, colon), text.substring(colon + 1));
            }
        }
    }
}
