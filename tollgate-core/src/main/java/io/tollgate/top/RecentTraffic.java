package io.tollgate.top;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The heaviest keys of one stream (one policy's refusals, say) over the last minute and the last 15 minutes, in
 * memory fixed by the summaries' capacity: a {@link SpaceSaving} summary per 10-second epoch, the last six epochs
 * kept as they are and older ones folded into a summary per minute, fifteen of those kept. The epoch in progress
 * is split into stripes by key, each with its own lock, so that threads recording different keys seldom wait
 * for each other; the stripes hold disjoint keys, so merging them keeps the bound of one summary.
 *
 * <p>The windows end now and start at an epoch's boundary: the last minute is 60 to 70 seconds, the last 15
 * minutes 15 to 16 minutes. Thread-safe.
 */
final class RecentTraffic {

    /** The length of an epoch, in microseconds. */
    static final long EPOCH_MICROS = 10_000_000;

    /** Epochs per minute. */
    static final int EPOCHS_PER_MINUTE = 6;

    /** Minutes the 15-minute window keeps. */
    static final int MINUTES = 15;

    private static final int STRIPES = 4;

    private final int capacity;
    private volatile Epoch current;
    /** The last {@link #EPOCHS_PER_MINUTE} closed epochs, oldest first; guarded by this. */
    private final ArrayDeque<Closed> epochs = new ArrayDeque<>();
    /** The last {@link #MINUTES} closed minutes, oldest first; guarded by this. */
    private final ArrayDeque<Closed> minutes = new ArrayDeque<>();

    /** An epoch in progress: a summary per stripe. */
    private static final class Epoch {
        final long index;
        final Stripe[] stripes = new Stripe[STRIPES];

        Epoch(long index, int capacity) {
            this.index = index;
            for (int i = 0; i < STRIPES; i++) {
                stripes[i] = new Stripe(new SpaceSaving(capacity));
            }
        }
    }

    /** One stripe of an epoch; closed once its epoch is, after which nothing is added to it. */
    private static final class Stripe {
        final SpaceSaving summary;
        boolean closed;

        Stripe(SpaceSaving summary) {
            this.summary = summary;
        }
    }

    /** A closed epoch or minute: its index (in epochs or minutes since the clock's origin) and its summary. */
    private record Closed(long index, SpaceSaving summary) {}

    RecentTraffic(int capacity, long nowMicros) {
        this.capacity = capacity;
        this.current = new Epoch(nowMicros / EPOCH_MICROS, capacity);
    }

    /** Adds {@code weight} to {@code key} at {@code nowMicros}. */
    void add(String key, long weight, long nowMicros) {
        Epoch epoch = epochAt(nowMicros);
        while (true) {
            Stripe stripe = epoch.stripes[Math.floorMod(key.hashCode(), STRIPES)];
            synchronized (stripe) {
                if (!stripe.closed) {
                    stripe.summary.add(key, weight);
                    return;
                }
            }
            epoch = current; // closed under us: the next epoch has begun
        }
    }

    /**
     * Returns the summary of the window of {@code minutesBack} minutes (1 or 15) that ends at {@code nowMicros}.
     */
    synchronized SpaceSaving window(int minutesBack, long nowMicros) {
        Epoch epoch = epochAt(nowMicros);
        List<SpaceSaving> parts = new ArrayList<>();
        for (Stripe stripe : epoch.stripes) {
            synchronized (stripe) {
                parts.add(SpaceSaving.merge(List.of(stripe.summary), capacity));
            }
        }
        long nowMinute = epoch.index / EPOCHS_PER_MINUTE;
        for (Closed closed : epochs) {
            boolean inWindow = minutesBack == 1
                    ? closed.index() >= epoch.index - EPOCHS_PER_MINUTE
                    : closed.index() / EPOCHS_PER_MINUTE == nowMinute;
            if (inWindow) {
                parts.add(closed.summary());
            }
        }
        if (minutesBack > 1) {
            for (Closed minute : minutes) {
                if (minute.index() >= nowMinute - minutesBack) {
                    parts.add(minute.summary());
                }
            }
        }
        return SpaceSaving.merge(parts, capacity);
    }

    /** Returns how many keys its summaries hold in all: what its memory grows with. */
    synchronized int heldKeys() {
        int held = 0;
        for (Stripe stripe : current.stripes) {
            synchronized (stripe) {
                held += stripe.summary.size();
            }
        }
        for (Closed closed : epochs) {
            held += closed.summary().size();
        }
        for (Closed minute : minutes) {
            held += minute.summary().size();
        }
        return held;
    }

    private Epoch epochAt(long nowMicros) {
        Epoch epoch = current;
        long index = nowMicros / EPOCH_MICROS;
        return index <= epoch.index ? epoch : begin(index);
    }

    /** Closes the epoch in progress and begins epoch {@code index}, unless another thread did. */
    private synchronized Epoch begin(long index) {
        Epoch old = current;
        if (index <= old.index) {
            return old;
        }
        current = new Epoch(index, capacity);
        List<SpaceSaving> stripes = new ArrayList<>(STRIPES);
        for (Stripe stripe : old.stripes) {
            synchronized (stripe) {
                stripe.closed = true;
                stripes.add(stripe.summary);
            }
        }
        epochs.addLast(new Closed(old.index, SpaceSaving.merge(stripes, capacity)));
        long oldMinute = old.index / EPOCHS_PER_MINUTE;
        if (index / EPOCHS_PER_MINUTE > oldMinute) {
            // The old epoch's minute is over: its epochs, all among the last six, become one summary
            List<SpaceSaving> ofMinute = new ArrayList<>(EPOCHS_PER_MINUTE);
            for (Closed closed : epochs) {
                if (closed.index() / EPOCHS_PER_MINUTE == oldMinute) {
                    ofMinute.add(closed.summary());
                }
            }
            minutes.addLast(new Closed(oldMinute, SpaceSaving.merge(ofMinute, capacity)));
        }
        while (epochs.size() > EPOCHS_PER_MINUTE) {
            epochs.removeFirst();
        }
        for (Iterator<Closed> it = minutes.iterator(); it.hasNext(); ) {
            if (it.next().index() < index / EPOCHS_PER_MINUTE - MINUTES) {
                it.remove();
            }
        }
        return current;
    }
}
