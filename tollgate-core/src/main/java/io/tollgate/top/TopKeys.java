package io.tollgate.top;

import io.tollgate.DecisionListener;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.spi.SummaryExchange;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Who a limiter limits, for every surface that shows it (the server's {@code /admin/top}, the starter's Actuator
 * endpoint): this instance's counts ({@link HeavyHitters}, a listener of the limiter's decisions) and,
 * the other live instances' as they last published them through the store they share ({@link SummaryExchange}),
 * merged on every read. Where the store cannot be asked, a read covers this instance alone and says so. Close it before the limiter: it stops
 * counting, and withdraws this instance's counts while the connection is still open.
 *
 * <p>Thread-safe.
 */
public final class TopKeys implements AutoCloseable {

    /** How long a read waits for the other instances' summaries. */
    public static final Duration READ_WAIT = Duration.ofSeconds(2);

    private final HeavyHitters counts;
    /** The exchange of summaries with the other instances; null where no other shares the store. */
    private final SummaryExchange shared;

    private final DecisionListener.Subscription counting;

    private TopKeys(HeavyHitters counts, SummaryExchange shared, DecisionListener.Subscription counting) {
        this.counts = counts;
        this.shared = shared;
        this.counting = counting;
    }

    /**
     * Counts the decisions of {@code limiter} from now on, in summaries of {@code capacity} keys, and shares them
     * with the other instances that count through {@code share} (given what to publish, it starts publishing and
     * returns the exchange, or null where no other instance shares the store).
     *
     * @throws UnsupportedOperationException if the limiter tells no decision listener (a limiter of an
     *     application's own)
     * @throws IllegalArgumentException if capacity is out of range ({@link HeavyHitters})
     */
    public static TopKeys count(
            RateLimiter limiter, TimeSource clock, int capacity, Function<Supplier<byte[]>, SummaryExchange> share) {
        HeavyHitters counts = new HeavyHitters(clock, capacity);
        DecisionListener.Subscription counting = limiter.onDecision(counts);
        try {
            return new TopKeys(counts, share.apply(counts::export), counting);
        } catch (RuntimeException e) {
            counting.cancel(); // no counts left listening with nobody to read them
            throw e;
        }
    }

    /**
     * A report and, when the other instances' summaries could not be read, why: it then covers this instance only.
     *
     * @param unshared null when every live instance's counts are in the report
     */
    public record Merged(HeavyHitters.Report report, String unshared) {}

    /** Returns the keys each summary holds. */
    public int capacity() {
        return counts.capacity();
    }

    /**
     * Returns the heaviest keys of every live instance together; may wait for the store, up to {@link #READ_WAIT}.
     *
     * @throws IllegalArgumentException if the limit is out of range, naming it
     */
    public Merged top(String policy, HeavyHitters.Measure by, HeavyHitters.Window window, int limit) {
        SummaryExchange.Others others = others();
        return new Merged(counts.top(policy, by, window, limit, others.summaries()), others.unshared());
    }

    /** Returns the key with {@code digest} among those any live instance lists for {@code policy}. */
    public Optional<String> keyOf(String policy, String digest) {
        return counts.keyOf(policy, Objects.requireNonNull(digest, "digest"), others().summaries());
    }

    private SummaryExchange.Others others() {
        return shared == null ? SummaryExchange.Others.NONE : shared.readOthers(READ_WAIT);
    }

    /** Stops counting, stops publishing this instance's counts, and withdraws them. */
    @Override
    public void close() {
        counting.cancel();
        if (shared != null) {
            shared.close();
        }
    }
}
