package io.tollgate.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.tollgate.Propagation;
import io.tollgate.guard.BucketStore;
import io.tollgate.guard.GuardedRateLimiter;
import io.tollgate.redis.internal.TokenBucketScript;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The channel through which the instances sharing a Redis tell each other of changes made to a key outside a
 * request (a reset, tokens given back), so that each forgets what it remembers of that key (its deny cache's
 * refusal, and the {@code LOCAL} fallback's copy of the bucket) and confirms it; the announcing instance waits for
 * the confirmations of the instances live at the announcement, at most {@link BucketStore#CONFIRMED_WITHIN}.
 *
 * <p><b>On the wire.</b> Redis pub/sub, channel {@code PREFIX + "changes"} ({@code tollgate:changes}), in UTF-8
 * ({@code redis-cli SUBSCRIBE tollgate:changes} shows them):
 *
 * <ul>
 *   <li>{@code changed INSTANCE N POLICY:KEY}: the instance whose id is {@code INSTANCE} changed the key's buckets
 *       under the policy; {@code N} numbers its announcements that wait for confirmations (resets), and is 0 for
 *       those that do not (tokens given back, on a request's path). Published by {@code changes.lua}, which also reads
 *       the ids of the live instances ({@link LiveInstances}) in the same call, so that the announcer knows whom
 *       to wait for.
 *   <li>{@code heard INSTANCE ANNOUNCER N}: the instance {@code INSTANCE} forgot what it remembered of the key of
 *       {@code ANNOUNCER}'s announcement {@code N}. Published once it has.
 * </ul>
 *
 * <p>Plain {@code PUBLISH} and {@code SUBSCRIBE} on standalone Redis, Sentinel and Redis Cluster alike: on a
 * Cluster a message published on any node reaches subscribers on every node over the cluster bus, so one
 * subscription on one node hears them all, and it need not follow slots as sharded pub/sub ({@code SSUBSCRIBE})
 * would, one subscription per master re-planned at every topology change, for a channel that carries only resets
 * and refunds.
 *
 * <p><b>Missed messages.</b> Pub/sub delivers at most once: a message sent while the subscription is down is
 * lost, and its instance does not confirm it (the announcer names it). The subscription has a connection of its
 * own, which Lettuce reconnects and resubscribes as it does the limiter's; on every (re)subscription the limiter
 * forgets every refusal it remembers ({@link GuardedRateLimiter#changesMayHaveBeenMissed}), and no refusal is
 * relied on longer than the deny cache's ceiling in any case. A limiter given an application's connection rather
 * than a client cannot open one: it announces its own changes without hearing whether they were confirmed, and
 * relies on the ceiling to hear of others'.
 *
 * <p>Thread-safe.
 */
final class BucketChanges implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(BucketChanges.class.getName());
    private static final Duration RETRY_EVERY = Duration.ofSeconds(1);
    private static final String CHANGED = "changed";
    private static final String HEARD = "heard";

    private final RedisConnector connector;
    private final byte[] channel;
    private final byte[] liveKey;
    private final String id;
    private final Supplier<CompletionStage<StatefulRedisPubSubConnection<byte[], byte[]>>> subscribing;
    private final ScheduledExecutorService retries;
    private final TokenBucketScript script = new TokenBucketScript(TokenBucketScript.CHANGES_RESOURCE);
    private final AtomicLong announcements = new AtomicLong();
    /** This instance's announcements that wait for confirmations, by number. */
    private final Map<Long, Confirmations> waiting = new ConcurrentHashMap<>();

    private volatile GuardedRateLimiter<?> listener;
    private volatile StatefulRedisPubSubConnection<byte[], byte[]> subscription;
    private final AtomicLong subscriptions = new AtomicLong();
    private volatile boolean closed;
    private volatile boolean toldNoPermission;

    /**
     * @param channel the channel's name
     * @param liveKey the key of the live instances' announcements ({@link LiveInstances})
     * @param id this instance's id, as it announces itself among the live instances
     * @param subscribing opens a pub/sub connection; null when the limiter has no client to open one with
     */
    BucketChanges(
            RedisConnector connector,
            byte[] channel,
            byte[] liveKey,
            String id,
            Supplier<CompletionStage<StatefulRedisPubSubConnection<byte[], byte[]>>> subscribing) {
        this.connector = connector;
        this.channel = channel;
        this.liveKey = liveKey;
        this.id = id;
        this.subscribing = subscribing;
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
     * Publishes that the key's buckets under the policy changed. With {@code confirmed}, the stage completes once
     * every other instance live when Redis took the message confirmed it, or {@link BucketStore#CONFIRMED_WITHIN}
     * after Redis took it (at once when this limiter cannot subscribe, and so cannot hear confirmations), naming
     * those that did not. Without, the message is numbered 0, which nobody confirms, and the stage completes once
     * Redis took it. It fails if the message cannot be sent.
     */
    CompletableFuture<Propagation> announce(String policyName, String key, boolean confirmed) {
        RedisScriptingAsyncCommands<byte[], byte[]> redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.failedFuture(new RedisConnectionException(connector.notConnected()));
        }
        if (!confirmed) {
            byte[] message =
                    String.join(" ", CHANGED, id, "0", policyName + ":" + key).getBytes(StandardCharsets.UTF_8);
            try {
                return ((BaseRedisAsyncCommands<byte[], byte[]>) redis)
                        .publish(channel, message)
                        .toCompletableFuture()
                        .thenApply(receivers -> Propagation.none());
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        long number = announcements.incrementAndGet();
        Confirmations confirmations = new Confirmations();
        boolean hearing = subscribing != null && !closed;
        if (hearing) {
            waiting.put(number, confirmations); // before the message: a confirmation may come before the reply
        }
        byte[] message = String.join(" ", CHANGED, id, Long.toString(number), policyName + ":" + key)
                .getBytes(StandardCharsets.UTF_8);
        CompletableFuture<List<Object>> published;
        try {
            published = script.run(redis, liveKey, new byte[][] {channel, message});
        } catch (RuntimeException e) {
            published = CompletableFuture.failedFuture(e);
        }
        return published
                .exceptionallyCompose(this::namingTheCure)
                .thenCompose(live -> {
                    Set<String> others = new HashSet<>();
                    for (Object instance : live) {
                        others.add(text((byte[]) instance));
                    }
                    others.remove(id);
                    if (!hearing) {
                        return CompletableFuture.completedFuture(
                                new Propagation(List.of(), Confirmations.sorted(others)));
                    }
                    confirmations.expect(others);
                    try {
                        retries.schedule(
                                confirmations::giveUp, BucketStore.CONFIRMED_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (RuntimeException shutDown) {
                        confirmations.giveUp(); // closed meanwhile
                    }
                    return confirmations.done;
                })
                .whenComplete((propagation, failure) -> waiting.remove(number));
    }

    /**
     * Fails with Redis's refusal and, where the Redis user may not use the channel (a script's refusal does not
     * start with {@code NOPERM}, as a command's does), what to grant it.
     */
    private CompletableFuture<List<Object>> namingTheCure(Throwable failure) {
        Throwable cause = TokenBucketScript.unwrap(failure);
        String refused = String.valueOf(cause.getMessage());
        if (!refused.contains("publish to the channel")) {
            return CompletableFuture.failedFuture(cause);
        }
        return CompletableFuture.failedFuture(new RedisCommandExecutionException(
                refused + "; the Redis user may not" + " use the channel (ACL SETUSER <user> &" + text(channel) + ")"));
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
        waiting.values().forEach(Confirmations::giveUp);
        StatefulRedisPubSubConnection<byte[], byte[]> open = subscription;
        if (open != null) {
            open.close();
        }
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static long parseOrZero(String number) {
        try {
            return Long.parseLong(number);
        } catch (NumberFormatException notOurs) {
            return 0;
        }
    }

    /** Tells {@code announcer} that this instance forgot what it remembered of the key of its announcement. */
    private void confirm(String announcer, String number) {
        RedisScriptingAsyncCommands<byte[], byte[]> redis = connector.commands();
        if (redis == null) {
            return; // the announcer names this instance as one that did not confirm
        }
        byte[] heard = String.join(" ", HEARD, id, announcer, number).getBytes(StandardCharsets.UTF_8);
        try {
            ((BaseRedisAsyncCommands<byte[], byte[]>) redis)
                    .publish(channel, heard)
                    .whenComplete((receivers, failure) -> {
                        if (failure != null) {
                            LOG.log(
                                    Level.DEBUG,
                                    () -> "Tollgate: confirming a change to " + announcer + " failed",
                                    failure);
                        }
                    });
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, () -> "Tollgate: confirming a change to " + announcer + " failed", e);
        }
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
            String[] parts = text(message).split(" ", 4);
            if (parts.length < 4 || parts[1].equals(id)) {
                return; // not an announcement, or this instance's own
            }
            if (parts[0].equals(CHANGED)) {
                int colon = parts[3].indexOf(':');
                GuardedRateLimiter<?> guard = listener;
                if (colon < 0 || guard == null) {
                    return;
                }
                guard.changedElsewhere(parts[3].substring(0, colon), parts[3].substring(colon + 1));
                if (!parts[2].equals("0")) { // 0: tokens given back, which nobody waits for
                    confirm(parts[1], parts[2]);
                }
            } else if (parts[0].equals(HEARD) && parts[2].equals(id)) {
                Confirmations confirmations = waiting.get(parseOrZero(parts[3]));
                if (confirmations != null) {
                    confirmations.heard(parts[1]);
                }
            }
        }
    }
}
