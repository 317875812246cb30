package io.tollgate;

import java.util.concurrent.CompletionStage;

/**
 * One slot of a {@link ConcurrencyLimit}, taken by {@link RateLimiter#tryAcquirePermit}: open from the
 * moment it is acquired until it is closed. Close it when the work it guards ends, in every case, best with
 * try-with-resources:
 *
 * <pre>{@code
 * try (Permit permit = limiter.tryAcquirePermit("customer-42", exports)) {
 *     if (!permit.acquired()) {
 *         return tooManyExports();
 *     }
 *     return runExport();
 * }
 * }</pre>
 *
 * A permit that was not acquired holds nothing, and closing it does nothing. Closing is idempotent.
 * Thread-safe.
 */
public interface Permit extends AutoCloseable {

    /** Returns whether the slot was taken: the request may proceed. */
    boolean acquired();

    /** Returns the limit this permit belongs to. */
    ConcurrencyLimit limit();

    /**
     * Returns how many permits of the key were open just after this one was asked for: this one included if
     * acquired, or the limit's maximum (or more, if the limit shrank) if refused. 0 when the failure policy
     * decided without knowing.
     */
    int inFlight();

    /**
     * Returns why the store did not decide and what was done instead, or null when it decided. A permit that a
     * failure policy granted holds no slot in the store.
     */
    Degradation degradation();

    /** Returns whether a failure policy decided instead of the store. */
    default boolean degraded() {
        return degradation() != null;
    }

    /**
     * Gives the slot back without waiting; the stage completes when the store has it back, and never
     * exceptionally: a slot that cannot be given back now comes back when its lease runs out. Idempotent.
     */
    CompletionStage<Void> releaseAsync();

    /**
     * Gives the slot back, waiting at most the limiter's time budget for the store; never throws. Idempotent.
     */
    @Override
    void close();
}
