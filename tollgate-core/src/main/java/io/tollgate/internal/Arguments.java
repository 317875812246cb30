package io.tollgate.internal;

import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.Objects;

/**
 * The argument checks that every {@link RateLimiter} applies before it decides anything, so that all
 * backends reject the same calls with the same messages. For implementations of {@code RateLimiter};
 * applications have no need of it.
 */
public final class Arguments {

    private Arguments() {}

    /**
     * Checks one request: a non-empty key, a policy, and a cost that the policy could ever admit.
     *
     * @throws NullPointerException if key or policy is null
     * @throws IllegalArgumentException if the key is empty or the cost is out of range for the policy
     */
    public static void checkRequest(String key, Policy policy, long cost) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(policy, "policy");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
        policy.checkCost(cost);
    }

    /**
     * Returns a caller's maximum wait in whole microseconds, saturating at {@link Long#MAX_VALUE}.
     *
     * @throws NullPointerException if maxWait is null
     * @throws IllegalArgumentException if maxWait is negative
     */
    public static long maxWaitMicros(Duration maxWait) {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + maxWait);
        }
        long seconds = maxWait.getSeconds();
        return seconds >= Long.MAX_VALUE / 1_000_000 - 1
                ? Long.MAX_VALUE
                : seconds * 1_000_000 + maxWait.getNano() / 1_000;
    }
}
