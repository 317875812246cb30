package io.tollgate;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The open permits of {@link ConcurrencyLimit}s in this process: a count per limit name and key, kept only
 * while a permit of the key is open, so that memory follows the requests in flight, not the keys ever seen.
 * The in-memory limiter's slots, and a store's fallback while the store cannot decide.
 *
 * <p>Thread-safe.
 */
public final class InFlightSlots {

    private record Slot(String limit, String key) {}

    private final ConcurrentHashMap<Slot, Integer> open = new ConcurrentHashMap<>();

    /**
     * Takes a slot if fewer than {@code max} permits of the key are open.
     *
     * @param max the most permits open at once here: the limit's maximum, or this instance's share of it
     * @param degradation why a store did not decide, for a fallback's permits; null in memory
     */
    public Permit tryAcquire(String key, ConcurrencyLimit limit, int max, Degradation degradation) {
        Slot slot = new Slot(limit.name(), key);
        int[] seen = new int[1];
        boolean[] acquired = new boolean[1];
        open.compute(slot, (ignored, count) -> {
            int now = count == null ? 0 : count;
            if (now < max) {
                acquired[0] = true;
                seen[0] = now + 1;
                return now + 1;
            }
            seen[0] = now;
            return count;
        });
        if (!acquired[0]) {
            return refused(limit, seen[0], degradation);
        }
        return new HeldPermit(
                limit,
                seen[0],
                degradation,
                () -> open.computeIfPresent(slot, (ignored, count) -> count <= 1 ? null : count - 1));
    }

    /** Returns how many permits of the key are open here. */
    public int inFlight(String key, ConcurrencyLimit limit) {
        Integer count = open.get(new Slot(limit.name(), key));
        return count == null ? 0 : count;
    }

    /** Returns how many keys have permits open: the entries this holds; for tests. */
    int keys() {
        return open.size();
    }

    /** Returns a permit that was refused, holding nothing. */
    public static Permit refused(ConcurrencyLimit limit, int inFlight, Degradation degradation) {
        return new HeldPermit(limit, inFlight, degradation, null);
    }

    /** Returns a permit that a failure policy granted without a slot: closing it gives nothing back. */
    public static Permit grantedWithoutSlot(ConcurrencyLimit limit, Degradation degradation) {
        return new HeldPermit(limit, 0, Objects.requireNonNull(degradation, "degradation"), () -> {});
    }

    /** A permit that runs {@code release} once when closed; a null release means it was refused. */
    private static final class HeldPermit implements Permit {

        private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

        private final ConcurrencyLimit limit;
        private final int inFlight;
        private final Degradation degradation;
        private final Runnable release;
        private final AtomicBoolean released = new AtomicBoolean();

        HeldPermit(ConcurrencyLimit limit, int inFlight, Degradation degradation, Runnable release) {
            this.limit = limit;
            this.inFlight = inFlight;
            this.degradation = degradation;
            this.release = release;
        }

        @Override
        public boolean acquired() {
            return release != null;
        }

        @Override
        public ConcurrencyLimit limit() {
            return limit;
        }

        @Override
        public int inFlight() {
            return inFlight;
        }

        @Override
        public Degradation degradation() {
            return degradation;
        }

        @Override
        public CompletionStage<Void> releaseAsync() {
            close();
            return DONE;
        }

        @Override
        public void close() {
            if (release != null && released.compareAndSet(false, true)) {
                release.run();
            }
        }

        @Override
        public String toString() {
            return "Permit[" + limit.name() + (acquired() ? ", acquired" : ", refused") + ", in flight " + inFlight
                    + (degradation == null ? "" : ", " + degradation.cause()) + "]";
        }
    }
}
