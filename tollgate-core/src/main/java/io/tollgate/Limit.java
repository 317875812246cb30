package io.tollgate;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * One token bucket: it holds at most {@code capacity} tokens (the burst a client may send at once) and
 * regains them at the {@code refill} rate. A new bucket starts full, or with {@code initialTokens} (as
 * Bucket4j's initial tokens: start empty, or partly filled, so that a new client cannot send a whole burst
 * at once). A bucket is new when its key was never used, and also once it was full again and forgotten (an
 * idle key costs no memory): a client idle long enough starts over with the initial tokens.
 *
 * <p>Every backend computes buckets exactly in integers, and the Redis backend does so in Lua, whose
 * numbers are doubles exact only up to 2<sup>53</sup>. A limit is therefore accepted only if the time to
 * refill an empty bucket, counted in its rate's ticks ({@code capacity × refill.ticksPerToken()}), is at
 * most 2<sup>52</sup>. For every rate written as one token per period, or as a number of tokens that
 * divides the period in microseconds ({@code 10/s}, {@code 1000/h}, {@code 5/m}), that allows a refill time
 * of up to 142 years: capacity 10<sup>9</sup> at {@code 1000000/s} or at {@code 1000/h} is fine, capacity
 * 10<sup>9</sup> at {@code 1/d} is refused. See {@code docs/concepts.md} for the full rule.
 *
 * @param capacity the most tokens the bucket holds, at least 1
 * @param refill how fast the bucket regains tokens
 * @param initialTokens the tokens a new bucket holds, 0 to {@code capacity}
 */
public record Limit(long capacity, Rate refill, long initialTokens) {

    /** The largest refill time from empty, in ticks, that every backend computes exactly. */
    static final long MAX_FILL_TICKS = 1L << 52;

    /**
     * Validates the limit.
     *
     * @throws IllegalArgumentException if capacity is below 1, the limit is outside the exact range, or
     *     initialTokens is not 0 to capacity
     * @throws NullPointerException if refill is null
     */
    public Limit {
        Objects.requireNonNull(refill, "refill");
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        if (initialTokens < 0 || initialTokens > capacity) {
            throw new IllegalArgumentException(
                    "initial tokens must be 0 to the capacity (" + capacity + "), was " + initialTokens);
        }
        if (capacity > MAX_FILL_TICKS / refill.ticksPerToken()) {
            throw new IllegalArgumentException("limit of capacity " + capacity + " refilled at " + refill
                    + " cannot be computed exactly: refilling an empty bucket takes more than 2^52 ticks of 1/"
                    + refill.ticksPerMicrosecond()
                    + " µs; use a smaller capacity or a faster rate");
        }
    }

    /**
     * Creates a limit whose new buckets start full.
     *
     * @throws IllegalArgumentException see {@link Limit#Limit(long, Rate, long)}
     */
    public Limit(long capacity, Rate refill) {
        this(capacity, refill, capacity);
    }

    /** Returns a limit of {@code capacity} tokens refilled at {@code refill}, new buckets full; see {@link Limit}. */
    public static Limit of(long capacity, Rate refill) {
        return new Limit(capacity, refill);
    }

    /**
     * Returns this limit with new buckets holding {@code tokens}: 0 starts them empty.
     *
     * @throws IllegalArgumentException if tokens is not 0 to the capacity
     */
    public Limit withInitialTokens(long tokens) {
        return new Limit(capacity, refill, tokens);
    }

    /** Returns the debt of a new bucket in ticks: 0 for one that starts full. */
    public long initialDebtTicks() {
        return (capacity - initialTokens) * refill.ticksPerToken();
    }

    /**
     * Returns how long an empty bucket of this limit takes to fill up, rounded up to the microsecond.
     */
    public Duration refillTime() {
        return Duration.of(TokenBucket.ceilDiv(fillTicks(), refill.ticksPerMicrosecond()), ChronoUnit.MICROS);
    }

    /** Returns the time to refill an empty bucket in ticks: at most 2^52. */
    public long fillTicks() {
        return capacity * refill.ticksPerToken();
    }

    /** Returns this limit as {@code capacity 10 refilled at 5/s}, and {@code , new buckets with 0}. */
    @Override
    public String toString() {
        return "capacity " + capacity + " refilled at " + refill
                + (initialTokens == capacity ? "" : ", new buckets with " + initialTokens);
    }
}
