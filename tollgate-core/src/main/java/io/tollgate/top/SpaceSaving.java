package io.tollgate.top;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The keys that weigh most in a stream, in a fixed amount of memory: Space-Saving (Metwally, Agrawal and El
 * Abbadi, "Efficient Computation of Frequent and Top-k Elements in Data Streams", 2005), with weights. It
 * holds at most {@code capacity} keys, whatever the number of distinct keys seen. A key it holds counts its
 * weight; a key it does not hold, once it is full, takes the place of the key with the least count, and
 * inherits that count as its error.
 *
 * <p>The bound: for every key held, its true weight lies between {@code count - error} and {@code count}; a key not
 * held weighed at most {@link #unheldBound()}, the least count; and both are at most {@code total / capacity}
 * in a summary that was added to. A summary merged from several ({@link #merge}) computes the same two bounds
 * from theirs: {@link #errorBound()} is the larger, whatever the merges behind it.
 *
 * <p>The least count is found in a heap ordered by count, with each key's place in it, so that adding is
 * {@code O(log capacity)}. Not thread-safe: callers hold a lock.
 */
final class SpaceSaving {

    /** The most keys {@link #read} accepts: the largest capacity a summary may have. */
    static final int MAX_READ = 4096;

    /** The longest key {@link #read} accepts, in bytes. */
    static final int MAX_KEY_BYTES = 64 * 1024;

    private final int capacity;
    private final Map<String, Counter> counters;
    /** A min-heap of the counters by count; each counter knows its index. */
    private final Counter[] heap;

    private int size;
    private long total;
    /** For a merged summary, the most a key it does not hold may have weighed; -1 for one added to. */
    private long unheld = -1;

    /** One key's estimate: at most {@code count}, at least {@code count - error}. */
    private static final class Counter {
        final String key;
        long count;
        long error;
        int index;

        Counter(String key, long count, long error) {
            this.key = key;
            this.count = count;
            this.error = error;
        }
    }

    /**
     * @throws IllegalArgumentException if capacity is not positive
     */
    SpaceSaving(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.capacity = capacity;
        this.counters = new HashMap<>(capacity * 2);
        this.heap = new Counter[capacity];
    }

    /** Returns the most keys held. */
    int capacity() {
        return capacity;
    }

    /** Returns how many keys it holds. */
    int size() {
        return size;
    }

    /** Returns the weight of the whole stream added so far. */
    long total() {
        return total;
    }

    /** Returns the most that a key this summary does not hold may have weighed. */
    long unheldBound() {
        if (unheld >= 0) {
            return unheld;
        }
        return size < capacity ? 0 : heap[0].count;
    }

    /**
     * Returns the most that any key's count may exceed its true weight, and that a key not held may have weighed:
     * the larger of {@link #unheldBound()} and every held key's error.
     */
    long errorBound() {
        long bound = unheldBound();
        for (int i = 0; i < size; i++) {
            bound = Math.max(bound, heap[i].error);
        }
        return bound;
    }

    /**
     * Adds {@code weight} to {@code key}.
     *
     * @throws IllegalArgumentException if weight is not positive
     */
    void add(String key, long weight) {
        if (weight < 1) {
            throw new IllegalArgumentException("weight must be positive, was " + weight);
        }
        total += weight;
        Counter counter = counters.get(key);
        if (counter != null) {
            counter.count += weight;
            siftDown(counter.index);
        } else if (size < capacity) {
            counter = new Counter(key, weight, 0);
            counters.put(key, counter);
            heap[size] = counter;
            counter.index = size++;
            siftUp(counter.index);
        } else {
            // The least counted key gives its place; the newcomer may have been it, for all this summary knows
            Counter least = heap[0];
            counters.remove(least.key);
            counter = new Counter(key, least.count + weight, least.count);
            counters.put(key, counter);
            heap[0] = counter;
            counter.index = 0;
            siftDown(0);
        }
    }

    /** Returns the keys held, the heaviest first (ties by key), at most {@code limit} of them. */
    List<TopKey> top(int limit) {
        Counter[] held = Arrays.copyOf(heap, size);
        Arrays.sort(held, Comparator.comparingLong((Counter c) -> -c.count).thenComparing(c -> c.key));
        List<TopKey> top = new ArrayList<>(Math.min(limit, size));
        for (int i = 0; i < held.length && top.size() < limit; i++) {
            top.add(new TopKey(held[i].key, held[i].count, held[i].error));
        }
        return top;
    }

    /**
     * Returns one summary of at most {@code capacity} keys of what {@code summaries} saw together. A key one of them
     * does not hold may have weighed up to its {@link #unheldBound()} there: that is added to the key's count and
     * error. A key none holds, or that the merged summary drops for want of room, weighed at most its {@link
     * #unheldBound()}.
     */
    static SpaceSaving merge(List<SpaceSaving> summaries, int capacity) {
        Map<String, long[]> estimates = new HashMap<>(); // key -> {count, error}
        long total = 0;
        long unheldEverywhere = 0;
        for (SpaceSaving summary : summaries) {
            total += summary.total;
            unheldEverywhere += summary.unheldBound();
            for (int i = 0; i < summary.size; i++) {
                estimates.computeIfAbsent(summary.heap[i].key, k -> new long[2]);
            }
        }
        for (SpaceSaving summary : summaries) {
            long unheld = summary.unheldBound();
            for (Map.Entry<String, long[]> estimate : estimates.entrySet()) {
                Counter counter = summary.counters.get(estimate.getKey());
                long[] value = estimate.getValue();
                value[0] += counter != null ? counter.count : unheld;
                value[1] += counter != null ? counter.error : unheld;
            }
        }
        List<Map.Entry<String, long[]>> ranked = new ArrayList<>(estimates.entrySet());
        ranked.sort(Comparator.comparingLong((Map.Entry<String, long[]> e) -> -e.getValue()[0])
                .thenComparing(Map.Entry::getKey));
        SpaceSaving merged = new SpaceSaving(capacity);
        long dropped = 0;
        for (int i = 0; i < ranked.size(); i++) {
            long[] value = ranked.get(i).getValue();
            if (i >= capacity) {
                dropped = Math.max(dropped, value[0]);
                continue;
            }
            Counter counter = new Counter(ranked.get(i).getKey(), value[0], value[1]);
            merged.counters.put(counter.key, counter);
            merged.heap[merged.size] = counter;
            counter.index = merged.size++;
            merged.siftUp(counter.index);
        }
        merged.total = total;
        merged.unheld = Math.max(unheldEverywhere, dropped);
        return merged;
    }

    /**
     * Writes this summary as {@link #read} reads it: its total, its {@link #unheldBound()}, and each key held with
     * its count and error.
     */
    void writeTo(DataOutputStream out) throws IOException {
        out.writeLong(total);
        out.writeLong(unheldBound());
        out.writeInt(size);
        for (int i = 0; i < size; i++) {
            byte[] key = heap[i].key.getBytes(StandardCharsets.UTF_8);
            out.writeInt(key.length);
            out.write(key);
            out.writeLong(heap[i].count);
            out.writeLong(heap[i].error);
        }
    }

    /**
     * Reads a summary that {@link #writeTo} wrote, with the same keys, counts, errors and bounds, holding at
     * most the keys written.
     *
     * @throws IOException if the bytes end early or hold impossible values
     */
    static SpaceSaving read(DataInputStream in) throws IOException {
        long total = in.readLong();
        long unheld = in.readLong();
        int size = in.readInt();
        if (total < 0 || unheld < 0 || size < 0 || size > MAX_READ) {
            throw new IOException("not a summary: total " + total + ", unheld " + unheld + ", size " + size);
        }
        SpaceSaving summary = new SpaceSaving(Math.max(1, size));
        for (int i = 0; i < size; i++) {
            int length = in.readInt();
            if (length < 0 || length > MAX_KEY_BYTES) {
                throw new IOException("not a summary: a key of " + length + " bytes");
            }
            byte[] bytes = new byte[length];
            in.readFully(bytes);
            String key = new String(bytes, StandardCharsets.UTF_8);
            Counter counter = new Counter(key, in.readLong(), in.readLong());
            if (counter.count < 1 || counter.error < 0 || counter.error > counter.count) {
                throw new IOException("not a summary: count " + counter.count + ", error " + counter.error);
            }
            if (summary.counters.putIfAbsent(key, counter) != null) {
                throw new IOException("not a summary: a key twice");
            }
            summary.heap[summary.size] = counter;
            counter.index = summary.size++;
            summary.siftUp(counter.index);
        }
        summary.total = total;
        summary.unheld = unheld;
        return summary;
    }

    private void siftUp(int index) {
        Counter moving = heap[index];
        while (index > 0) {
            int parent = (index - 1) >>> 1;
            if (heap[parent].count <= moving.count) {
                break;
            }
            place(heap[parent], index);
            index = parent;
        }
        place(moving, index);
    }

    private void siftDown(int index) {
        Counter moving = heap[index];
        while (true) {
            int child = 2 * index + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && heap[child + 1].count < heap[child].count) {
                child++;
            }
            if (heap[child].count >= moving.count) {
                break;
            }
            place(heap[child], index);
            index = child;
        }
        place(moving, index);
    }

    private void place(Counter counter, int index) {
        heap[index] = counter;
        counter.index = index;
    }
}
