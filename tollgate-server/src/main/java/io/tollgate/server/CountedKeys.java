package io.tollgate.server;

import io.tollgate.internal.top.HeavyHitters;
import io.tollgate.redis.internal.SummaryExchange;
import java.time.Duration;
import java.util.Optional;

/**
 * Who the servers limit: this server's counts ({@link HeavyHitters}) and, on Redis, the other live servers' as
 * they last published them ({@link SummaryExchange}), merged on every read. Where Redis cannot be asked, a read
 * covers this server alone and says so. Thread-safe.
 */
final class CountedKeys implements AutoCloseable {

    /** How long a read waits for the other servers' summaries. */
    static final Duration READ_WAIT = Duration.ofSeconds(2);

    private final HeavyHitters counts;
    private final SummaryExchange shared;

    /**
     * @param shared the exchange of summaries with the other servers, or null when the store is not shared
     */
    CountedKeys(HeavyHitters counts, SummaryExchange shared) {
        this.counts = counts;
        this.shared = shared;
    }

    /**
     * A report and, when the other servers' summaries could not be read, why: it then covers this server only.
     *
     * @param unshared null when every live server's counts are in the report
     */
    record Merged(HeavyHitters.Report report, String unshared) {}

    /** Returns the keys each summary holds. */
    int capacity() {
        return counts.capacity();
    }

    /** Returns the heaviest keys of every live server together; may wait for Redis, up to {@link #READ_WAIT}. */
    Merged top(String policy, HeavyHitters.Measure by, HeavyHitters.Window window, int limit) {
        SummaryExchange.Others others = others();
        return new Merged(counts.top(policy, by, window, limit, others.summaries()), others.unshared());
    }

    /** Returns the key with {@code digest} among those any live server lists for {@code policy}. */
    Optional<String> keyOf(String policy, String digest) {
        return counts.keyOf(policy, digest, others().summaries());
    }

    private SummaryExchange.Others others() {
        return shared == null ? SummaryExchange.Others.NONE : shared.readOthers(READ_WAIT);
    }

    @Override
    public void close() {
        if (shared != null) {
            shared.close();
        }
    }
}
