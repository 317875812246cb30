package io.tollgate;

import java.time.Duration;
import java.util.Objects;

/**
 * The answer to one request for tokens.
 *
 * <p>When a policy has several limits, the decision reports the one that matters to the client: for a
 * refused request, the limit that keeps it waiting longest; for an allowed one, the limit with the fewest
 * tokens left (the first such limit on a tie).
 *
 * <p>Times are kept in whole microseconds, rounded up, so that a decision costs no more than one small
 * object; {@link #retryAfter()} and {@link #resetAfter()} give them as durations.
 *
 * <p>A <em>degraded</em> decision was made by a {@link FailurePolicy} because the store that normally
 * decides (such as Redis) could not; {@link #degradation()} says why. Its other fields describe the
 * fallback's answer: the policy's first limit with nothing known of its bucket for {@code ALLOW} and {@code
 * DENY}, the local bucket for {@code LOCAL}.
 *
 * @param allowed whether the request passed and its cost was taken from every limit
 * @param limit the limit this decision reports; for a calendar quota, its {@link CalendarQuota#reportedLimit()}
 * @param limitIndex the position of {@code limit} in its policy's {@link Policy#limits()}; past them, {@code
 *     limits().size() + q} names the policy's calendar quota {@code q}, whose remaining count this reports,
 *     and whose reset is the start of its next period
 * @param remaining whole tokens left in that limit's bucket after this request
 * @param retryAfterMicros for a refused request, microseconds until a request of the same cost could pass
 *     if no other request takes tokens meanwhile; zero for an allowed one
 * @param resetAfterMicros microseconds until that limit's bucket is full again if no request takes tokens
 *     meanwhile
 * @param degradation why the store did not decide, or null for a decision the store made
 */
public record Decision(
        boolean allowed,
        Limit limit,
        int limitIndex,
        long remaining,
        long retryAfterMicros,
        long resetAfterMicros,
        Degradation degradation) {

    /**
     * Validates the decision.
     *
     * @throws IllegalArgumentException if limitIndex, remaining or a time is negative, or an allowed
     *     decision has a retry-after
     * @throws NullPointerException if limit is null
     */
    public Decision {
        Objects.requireNonNull(limit, "limit");
        if (limitIndex < 0 || remaining < 0 || retryAfterMicros < 0 || resetAfterMicros < 0) {
            throw new IllegalArgumentException("negative index, remaining or time in decision");
        }
        if (allowed && retryAfterMicros != 0) {
            throw new IllegalArgumentException(
                    "an allowed decision has no retry-after, was " + retryAfterMicros + " µs");
        }
    }

    /** Creates a decision that the store made: not degraded. */
    public Decision(
            boolean allowed,
            Limit limit,
            int limitIndex,
            long remaining,
            long retryAfterMicros,
            long resetAfterMicros) {
        this(allowed, limit, limitIndex, remaining, retryAfterMicros, resetAfterMicros, null);
    }

    /** Returns whether a failure policy made this decision because the store could not. */
    public boolean degraded() {
        return degradation != null;
    }

    /** Returns this decision, marked as made by a failure policy for the given reason. */
    public Decision degradedBy(Degradation degradation) {
        Objects.requireNonNull(degradation, "degradation");
        return new Decision(allowed, limit, limitIndex, remaining, retryAfterMicros, resetAfterMicros, degradation);
    }

    /** Returns {@link #retryAfterMicros()} as a duration: zero for an allowed request. */
    public Duration retryAfter() {
        return micros(retryAfterMicros);
    }

    /** Returns {@link #resetAfterMicros()} as a duration. */
    public Duration resetAfter() {
        return micros(resetAfterMicros);
    }

    private static Duration micros(long micros) {
        return micros == 0 ? Duration.ZERO : Duration.ofSeconds(micros / 1_000_000, micros % 1_000_000 * 1_000);
    }
}
