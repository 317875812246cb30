package io.tollgate;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The listeners of one limiter ({@link io.tollgate.RateLimiter#onDecision}), and the telling of each decision to
 * them. With no listener, telling costs one read of a volatile field and makes no event. Listeners are added and
 * removed rarely (a copy of the array each time) and told often.
 *
 * <p>Thread-safe. For a {@link RateLimiter} of one's own, which tells its listeners through one; applications have
 * no need of it.
 */
public final class DecisionListeners {

    private static final System.Logger LOG = System.getLogger(DecisionListener.class.getName());

    private static final Entry[] NONE = new Entry[0];

    private volatile Entry[] entries = NONE;

    /**
     * Adds {@code listener}, told after those added before it.
     *
     * @throws NullPointerException if listener is null
     */
    public DecisionListener.Subscription add(DecisionListener listener) {
        Entry entry = new Entry(Objects.requireNonNull(listener, "listener"));
        synchronized (this) {
            Entry[] grown = Arrays.copyOf(entries, entries.length + 1);
            grown[grown.length - 1] = entry;
            entries = grown;
        }
        return () -> remove(entry);
    }

    /** Tells the listeners that a request was allowed or refused. */
    public void decided(String key, Policy policy, long cost, boolean allowed, String source) {
        Entry[] told = entries;
        if (told.length > 0) {
            tell(
                    told,
                    new DecisionEvent(
                            key,
                            policy,
                            cost,
                            allowed ? DecisionEvent.Outcome.ALLOWED : DecisionEvent.Outcome.REFUSED,
                            source));
        }
    }

    /** Tells the listeners that a cost was charged whatever the buckets held. */
    public void charged(String key, Policy policy, long cost, String source) {
        Entry[] told = entries;
        if (told.length > 0) {
            tell(told, new DecisionEvent(key, policy, cost, DecisionEvent.Outcome.CHARGED, source));
        }
    }

    private static void tell(Entry[] told, DecisionEvent event) {
        for (Entry entry : told) {
            try {
                entry.listener.onDecision(event);
            } catch (RuntimeException e) {
                // A broken listener must not break decisions, nor flood the log on every request
                if (entry.failed.compareAndSet(false, true)) {
                    LOG.log(
                            Level.WARNING,
                            "a decision listener (" + entry.listener + ") failed; its later failures are not logged",
                            e);
                }
            }
        }
    }

    private synchronized void remove(Entry entry) {
        Entry[] current = entries;
        for (int i = 0; i < current.length; i++) {
            if (current[i] == entry) {
                Entry[] shrunk = new Entry[current.length - 1];
                System.arraycopy(current, 0, shrunk, 0, i);
                System.arraycopy(current, i + 1, shrunk, i, current.length - i - 1);
                entries = shrunk;
                return;
            }
        }
    }

    private static final class Entry {
        final DecisionListener listener;
        final AtomicBoolean failed = new AtomicBoolean();

        Entry(DecisionListener listener) {
            this.listener = listener;
        }
    }
}
