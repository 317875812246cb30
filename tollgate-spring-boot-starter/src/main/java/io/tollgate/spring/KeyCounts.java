package io.tollgate.spring;

import io.tollgate.RateLimiter;
import io.tollgate.internal.top.CountedRateLimiter;
import io.tollgate.internal.top.HeavyHitters;
import io.tollgate.internal.top.KeyDisplay;
import io.tollgate.redis.internal.SummaryExchange;
import java.time.Duration;

/**
 * Who the application's rules and {@code @RateLimit} limit: the counts of every decision they take, per policy and
 * key ({@code tollgate.top-keys.*}), how the Actuator shows the keys, and, on Redis, the exchange of counts with
 * the application's other instances. Closed with the application context, before the limiter.
 *
 * @param counts the summaries, per policy, of the keys refused and charged most; null when counting is off
 * @param show how keys are shown
 * @param shared the exchange of summaries with the other instances on Redis, or null (in memory, or off)
 */
record KeyCounts(HeavyHitters counts, KeyDisplay show, SummaryExchange shared) implements AutoCloseable {

    /** How long a read waits for the other instances' summaries. */
    static final Duration READ_WAIT = Duration.ofSeconds(2);

    /** Returns {@code limiter} with its decisions counted here, or as it is when counting is off. */
    RateLimiter around(RateLimiter limiter) {
        return counts == null ? limiter : new CountedRateLimiter(limiter, counts);
    }

    /** Returns the other instances' summaries, or none (and why, if Redis could not be asked). Blocks. */
    SummaryExchange.Others others() {
        return shared == null ? SummaryExchange.Others.NONE : shared.readOthers(READ_WAIT);
    }

    /** Stops publishing this instance's counts, and withdraws them. */
    @Override
    public void close() {
        if (shared != null) {
            shared.close();
        }
    }
}
