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
 * @param allowed whether the request passed and its cost was taken from every limit
 * @param limit the limit this decision reports
 * @param limitIndex the position of {@code limit} in its policy's {@link Policy#limits()}
 * @param remaining whole tokens left in that limit's bucket after this request
 * @param retryAfter for a refused request, how long until a request of the same cost could pass if no
 *     other request takes tokens meanwhile; zero for an allowed one
 * @param resetAfter how long until that limit's bucket is full again if no request takes tokens meanwhile
 */
public record Decision(
        boolean allowed, Limit limit, int limitIndex, long remaining, Duration retryAfter, Duration resetAfter) {

    /**
     * Validates the decision.
     *
     * @throws IllegalArgumentException if limitIndex or remaining is negative, a duration is negative, or
     *     an allowed decision has a retry-after
     * @throws NullPointerException if limit or a duration is null
     */
    public Decision {
        Objects.requireNonNull(limit, "limit");
        Objects.requireNonNull(retryAfter, "retryAfter");
        Objects.requireNonNull(resetAfter, "resetAfter");
        if (limitIndex < 0 || remaining < 0 || retryAfter.isNegative() || resetAfter.isNegative()) {
            throw new IllegalArgumentException("negative index, remaining or duration in decision");
        }
        if (allowed && !retryAfter.isZero()) {
            throw new IllegalArgumentException("an allowed decision has no retry-after, was " + retryAfter);
        }
    }
}
