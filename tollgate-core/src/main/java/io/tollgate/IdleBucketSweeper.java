package io.tollgate;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;

/**
 * Drops the buckets of idle keys. A bucket that is full again is the same as no bucket, so its entry can
 * go; one that is not full must stay, or its client would get a fresh bucket early.
 *
 * <p>The sweep runs on the threads that use the limiter, a slice of {@value #SLICE} entries at a time: a
 * slice every {@value #SLICE_INTERVAL_MICROS} µs until a pass over all entries is done, then a pause of
 * {@value #PASS_INTERVAL_MICROS} µs. The thread that finds a slice due takes it; others do not wait. An
 * entry is removed only through {@link Bucket#retireIfForgotten}, so a charge that races with its removal is
 * never lost.
 */
final class IdleBucketSweeper<K> {

    static final int SLICE = 4_096;
    static final long SLICE_INTERVAL_MICROS = 10_000;
    static final long PASS_INTERVAL_MICROS = 1_000_000;

    private final ConcurrentMap<K, Bucket> buckets;
    private final LongConsumer beforeRemoving;
    private final AtomicBoolean sweeping = new AtomicBoolean();
    private volatile long nextSliceMicros;
    private Iterator<Map.Entry<K, Bucket>> cursor; // guarded by sweeping

    /**
     * @param beforeRemoving told the sweep's time before an entry is removed, so that a bucket created in
     *     its place never starts earlier than the moment its predecessor was seen full
     */
    IdleBucketSweeper(ConcurrentMap<K, Bucket> buckets, LongConsumer beforeRemoving, long nowMicros) {
        this.buckets = buckets;
        this.beforeRemoving = beforeRemoving;
        this.nextSliceMicros = nowMicros + PASS_INTERVAL_MICROS;
    }

    /** Sweeps a slice if one is due and no other thread is sweeping. */
    void sweepIfDue(long nowMicros) {
        if (nowMicros < nextSliceMicros || !sweeping.compareAndSet(false, true)) {
            return;
        }
        try {
            boolean passDone = sweep(nowMicros, SLICE);
            nextSliceMicros = nowMicros + (passDone ? PASS_INTERVAL_MICROS : SLICE_INTERVAL_MICROS);
        } finally {
            sweeping.set(false);
        }
    }

    /** Sweeps every entry now, waiting for a sweep under way to finish; for tests. */
    void sweepAll(long nowMicros) {
        while (!sweeping.compareAndSet(false, true)) {
            Thread.onSpinWait();
        }
        try {
            cursor = null;
            sweep(nowMicros, Integer.MAX_VALUE);
        } finally {
            sweeping.set(false);
        }
    }

    /** Sweeps up to {@code max} entries; returns whether that finished a pass. */
    private boolean sweep(long nowMicros, int max) {
        if (cursor == null) {
            cursor = buckets.entrySet().iterator();
        }
        beforeRemoving.accept(nowMicros);
        for (int i = 0; i < max && cursor.hasNext(); i++) {
            Map.Entry<K, Bucket> entry = cursor.next();
            Bucket bucket = entry.getValue();
            if (bucket.isForgotten(nowMicros)) {
                buckets.computeIfPresent(
                        entry.getKey(),
                        (key, current) -> current == bucket && bucket.retireIfForgotten(nowMicros) ? null : current);
            }
        }
        if (cursor.hasNext()) {
            return false;
        }
        cursor = null;
        return true;
    }
}
