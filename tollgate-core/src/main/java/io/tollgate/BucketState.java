package io.tollgate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the buckets of one client key under one policy hold at a moment, as {@link RateLimiter#inspect}
 * reports it without taking anything: for each limit of the policy, the whole tokens in its bucket and how
 * long until it is full again if nobody takes tokens.
 *
 * @param limits the state of each limit, in the order of the policy's limits
 */
public record BucketState(List<LimitState> limits) {

    /**
     * One limit's bucket.
     *
     * @param limit the limit
     * @param tokens whole tokens in the bucket, 0 when it is empty or in debt
     * @param untilFullMicros microseconds until the bucket is full again, 0 when it is full
     */
    public record LimitState(Limit limit, long tokens, long untilFullMicros) {

        /**
         * Validates the state.
         *
         * @throws IllegalArgumentException if tokens or the time is negative
         * @throws NullPointerException if limit is null
         */
        public LimitState {
            Objects.requireNonNull(limit, "limit");
            if (tokens < 0 || untilFullMicros < 0) {
                throw new IllegalArgumentException("negative tokens or time in a bucket state");
            }
        }

        /** Returns {@link #untilFullMicros()} as a duration. */
        public Duration untilFull() {
            return Duration.ofSeconds(untilFullMicros / 1_000_000, untilFullMicros % 1_000_000 * 1_000);
        }
    }

    /**
     * Copies the list.
     *
     * @throws IllegalArgumentException if there is no limit
     * @throws NullPointerException if the list or an element is null
     */
    public BucketState {
        limits = List.copyOf(limits);
        if (limits.isEmpty()) {
            throw new IllegalArgumentException("a bucket state has at least one limit");
        }
    }

    /** Returns the state of buckets of {@code limits} whose debts are {@code debts} (ticks, in order). */
    public static BucketState of(List<Limit> limits, long[] debts) {
        List<LimitState> states = new ArrayList<>(limits.size());
        for (int i = 0; i < limits.size(); i++) {
            Limit limit = limits.get(i);
            states.add(new LimitState(
                    limit, TokenBucket.remaining(debts[i], limit), TokenBucket.untilFullMicros(debts[i], limit)));
        }
        return new BucketState(states);
    }

    /** Returns the tokens a request could take now: the fewest of any limit. */
    public long tokens() {
        long tokens = Long.MAX_VALUE;
        for (LimitState state : limits) {
            tokens = Math.min(tokens, state.tokens());
        }
        return tokens;
    }

    /** Returns how long until every limit is full again: the longest of any. */
    public Duration untilFull() {
        long longest = 0;
        for (LimitState state : limits) {
            longest = Math.max(longest, state.untilFullMicros());
        }
        return Duration.ofSeconds(longest / 1_000_000, longest % 1_000_000 * 1_000);
    }
}
