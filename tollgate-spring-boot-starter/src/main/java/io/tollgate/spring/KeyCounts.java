package io.tollgate.spring;

import io.tollgate.DecisionListener;
import io.tollgate.RateLimiter;
import io.tollgate.internal.top.HeavyHitters;
import io.tollgate.internal.top.KeyDisplay;
import io.tollgate.redis.internal.SummaryExchange;
import java.time.Duration;
import java.util.function.Function;

/**
 * Who the application is limiting: the counts of every decision its limiter takes (the rules', {@code @RateLimit}'s
 * and the application's own calls), per policy and key ({@code tollgate.top-keys.*}), how the Actuator shows the
 * keys, and, on Redis, the exchange of counts with the application's other instances. Closed with the application
 * context, before the limiter.
 *
 * @param counts the summaries, per policy, of the keys refused and charged most; null when counting is off
 * @param show how keys are shown
 * @param shared the exchange of summaries with the other instances on Redis, or null (in memory, or off)
 * @param counting the counts' subscription to the limiter's decisions, or null when counting is off
 */
record KeyCounts(HeavyHitters counts, KeyDisplay show, SummaryExchange shared, DecisionListener.Subscription counting)
        implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(KeyCounts.class.getName());

    /** How long a read waits for the other instances' summaries. */
    static final Duration READ_WAIT = Duration.ofSeconds(2);

    /** Returns counts that count nothing: {@code tollgate.top-keys.enabled} is false. */
    static KeyCounts off(KeyDisplay show) {
        return new KeyCounts(null, show, null, null);
    }

    /**
     * Returns the counts of {@code limiter}'s decisions, shared through {@code sharing} on Redis. A limiter of the
     * application's own that tells no listener is not counted, and the log says so.
     *
     * @param sharing makes the exchange of summaries for the counts; null in memory
     */
    static KeyCounts of(
            RateLimiter limiter,
            HeavyHitters counts,
            KeyDisplay show,
            Function<HeavyHitters, SummaryExchange> sharing) {
        DecisionListener.Subscription counting;
        try {
            counting = limiter.onDecision(counts);
        } catch (UnsupportedOperationException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "tollgate.top-keys: the application''s RateLimiter ({0}) tells no decision listener: who it limits"
                            + " is not counted",
                    limiter);
            return off(show);
        }
        return new KeyCounts(counts, show, sharing == null ? null : sharing.apply(counts), counting);
    }

    /** Returns the other instances' summaries, or none (and why, if Redis could not be asked). Blocks. */
    SummaryExchange.Others others() {
        return shared == null ? SummaryExchange.Others.NONE : shared.readOthers(READ_WAIT);
    }

    /** Stops counting, stops publishing this instance's counts, and withdraws them. */
    @Override
    public void close() {
        if (counting != null) {
            counting.cancel();
        }
        if (shared != null) {
            shared.close();
        }
    }
}
