package io.tollgate.guard;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which keys may be hot, for the price of one counter per request: the tokens asked for in the current window,
 * counted in one of a fixed number of slots by a hash of the policy's name and the key. A slot is hot once it has
 * counted a threshold within its window; several keys may share a slot, so a hot slot only says that one of its
 * keys may be hot, and {@link Leases} then counts that key on its own. Keys that are never hot cost no memory.
 *
 * <p>Thread-safe and lock-free: a slot is one {@code long}, its window number in the high half and its count in
 * the low half.
 */
final class HotKeySlots {

    private static final int SLOTS = 4_096;
    private static final long COUNT_MASK = 0xFFFF_FFFFL;

    private final AtomicLongArray slots = new AtomicLongArray(SLOTS);
    private final long windowMicros;
    private final long hotCount;

    /**
     * @param windowMicros how long a slot counts before it starts again
     * @param hotCount the tokens within a window that make a slot hot
     */
    HotKeySlots(long windowMicros, long hotCount) {
        this.windowMicros = windowMicros;
        this.hotCount = hotCount;
    }

    /** Counts {@code cost} tokens asked for the key at {@code nowMicros}; returns whether its slot is hot. */
    boolean count(String policyName, String key, long cost, long nowMicros) {
        int hash = key.hashCode() * 31 + policyName.hashCode();
        int index = (hash ^ (hash >>> 16)) & (SLOTS - 1);
        long window = (nowMicros / windowMicros) & COUNT_MASK;
        while (true) {
            long slot = slots.get(index);
            long counted = (slot >>> 32) == window ? (slot & COUNT_MASK) : 0;
            long next = Math.min(COUNT_MASK, counted + cost);
            if (slots.compareAndSet(index, slot, (window << 32) | next)) {
                return next >= hotCount;
            }
        }
    }
}
