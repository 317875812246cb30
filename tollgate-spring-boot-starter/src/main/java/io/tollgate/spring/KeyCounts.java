package io.tollgate.spring;

import io.tollgate.RateLimiter;
import io.tollgate.internal.top.CountedRateLimiter;
import io.tollgate.internal.top.HeavyHitters;
import io.tollgate.internal.top.KeyDisplay;

/**
 * Who the application's rules and {@code @RateLimit} limit: the counts of every decision they take, per policy and
 * key ({@code tollgate.top-keys.*}), and how the Actuator shows the keys.
 *
 * @param counts the summaries, per policy, of the keys refused and charged most; null when counting is off
 * @param show how keys are shown
 */
record KeyCounts(HeavyHitters counts, KeyDisplay show) {

    /** Returns {@code limiter} with its decisions counted here, or as it is when counting is off. */
    RateLimiter around(RateLimiter limiter) {
        return counts == null ? limiter : new CountedRateLimiter(limiter, counts);
    }
}
