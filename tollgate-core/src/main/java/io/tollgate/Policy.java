package io.tollgate;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A named set of limits that every request of a client must pass together, such as a burst of 10 per
 * second and a quota of 1000 per hour. A request passes only if every limit has enough tokens; then all
 * of them are charged. If any limit refuses, none is charged.
 *
 * <p>The name identifies the buckets: a limiter keeps one bucket set per policy name and client key, so
 * two policies with the same name share buckets. Changing the limits of a named policy is a policy
 * change; existing buckets carry on as {@link RateLimiter} describes. Names are 1 to 64 characters of
 * letters, digits, {@code _}, {@code -} and {@code .}, so they are safe in storage keys, HTTP headers and
 * metric tags.
 *
 * @param name the policy name
 * @param limits the limits, 1 to {@value #MAX_LIMITS}, all checked together
 */
public record Policy(String name, List<Limit> limits) {

    /** The most limits one policy may hold. */
    public static final int MAX_LIMITS = 8;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /**
     * Validates the policy and copies the list of limits.
     *
     * @throws IllegalArgumentException if the name is not 1 to 64 letters, digits, {@code _}, {@code -} or
     *     {@code .}, or there are no limits or more than {@value #MAX_LIMITS}
     * @throws NullPointerException if the name, the list or one of its limits is null
     */
    public Policy {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(limits, "limits");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "invalid policy name '" + name + "': use 1 to 64 letters, digits, '_', '-' or '.'");
        }
        if (limits.isEmpty() || limits.size() > MAX_LIMITS) {
            throw new IllegalArgumentException(
                    "policy '" + name + "' must have 1 to " + MAX_LIMITS + " limits, has " + limits.size());
        }
        limits = List.copyOf(limits);
    }

    /**
     * Returns a policy named {@code name} with the given limits.
     *
     * @throws IllegalArgumentException see {@link Policy#Policy}
     */
    public static Policy of(String name, Limit limit, Limit... more) {
        List<Limit> all = new ArrayList<>(1 + more.length);
        all.add(limit);
        all.addAll(List.of(more));
        return new Policy(name, all);
    }

    /** Returns the smallest capacity among the limits: the largest cost a request can ever have. */
    public long maxCost() {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < limits.size(); i++) { // indexed: no iterator on the hot path
            min = Math.min(min, limits.get(i).capacity());
        }
        return min;
    }

    /**
     * Returns {@code cost} if a request of that cost could ever pass this policy.
     *
     * @throws IllegalArgumentException if cost is below 1 or above {@link #maxCost()}
     */
    public long checkCost(long cost) {
        if (cost < 1) {
            throw new IllegalArgumentException("cost must be at least 1, was " + cost);
        }
        if (cost > maxCost()) {
            throw new IllegalArgumentException("cost " + cost + " exceeds the smallest capacity (" + maxCost()
                    + ") of policy '" + name + "': such a request could never pass");
        }
        return cost;
    }
}
