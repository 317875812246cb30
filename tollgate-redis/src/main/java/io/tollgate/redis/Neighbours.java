package io.tollgate.redis;

import io.tollgate.guard.GuardedRateLimiter;
import java.time.Duration;

/**
 * The other instances that share a limiter's Redis, as this one knows them: its own id among them, the channel on
 * which they tell each other of changes to buckets outside a request (a reset, tokens given back), and the
 * announcement that keeps this instance counted live. Joined once the guard that hears the changes exists; left
 * before the guard closes, closed after it. Thread-safe.
 */
final class Neighbours {

    private final RedisConnector connector;
    private final BucketKeys keys;
    private final String id = LiveInstances.newId();
    private final BucketChanges changes;
    private volatile LiveInstances live;

    Neighbours(RedisConnector connector, BucketKeys keys) {
        this.connector = connector;
        this.keys = keys;
        this.changes = new BucketChanges(connector, keys.changesChannel(), keys.instancesKey(), id, connector.pubSub());
    }

    /** Returns the channel of changes, on which this instance announces its own. */
    BucketChanges changes() {
        return changes;
    }

    /**
     * Starts telling {@code guard} of the changes the others announce, and announcing this instance among the live
     * ones, waiting at most {@code firstWait} for each to start.
     *
     * @param countsLive whether {@code guard} takes the live count the store keeps as the instances sharing each
     *     limit, rather than a count the settings fixed
     */
    void join(GuardedRateLimiter<?> guard, boolean countsLive, Duration firstWait) {
        // Announced even with a count fixed (which the count then does not change): a reset waits for the
        // confirmations of the live instances. Subscribed first: an instance live is one that hears changes.
        LiveInstances joined =
                new LiveInstances(connector, keys.instancesKey(), id, countsLive ? guard::instancesCounted : n -> {});
        changes.listen(guard, firstWait);
        joined.start(firstWait);
        live = joined;
    }

    /** Stops announcing this instance, taking it off the live ones, waiting at most {@code maxWait}. */
    void leave(Duration maxWait) {
        LiveInstances joined = live;
        if (joined != null) {
            joined.close(maxWait);
        }
    }

    /** Stops hearing changes. */
    void close() {
        changes.close();
    }

    /** Returns the id this instance announces among the live ones, as a {@link io.tollgate.Propagation} names it. */
    String id() {
        return id;
    }

    /** Returns how many times this instance (re)subscribed to the channel of changes. */
    long subscriptions() {
        return changes.subscriptions();
    }
}
