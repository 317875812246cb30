package io.tollgate;

import java.time.Duration;
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
 * <p>A policy may also hold {@linkplain CalendarQuota calendar quotas}, such as 10 000 a month that start
 * again on the first: a request passes only if every limit and every quota has room for it, and then all are
 * charged, atomically, in memory and on Redis alike.
 *
 * <p>A charge made after the fact ({@link RateLimiter#chargeAsync}) may take a bucket below empty, into debt,
 * but no deeper than the policy's {@linkplain #maxDebt() maximum debt}: so the longest one charge can keep a
 * client out is known, whoever makes it.
 *
 * @param name the policy name
 * @param limits the limits, 1 to {@value #MAX_LIMITS}, all checked together
 * @param quotas the calendar quotas, 0 to {@value #MAX_QUOTAS}, checked with the limits
 * @param maxDebt how far below empty a charge after the fact may take each limit's bucket, as the time that
 *     debt takes to refill: a bucket so charged holds its first token again at most {@code maxDebt} plus one
 *     token's refill later. Given as null, the longest time any limit takes to fill from empty ({@link
 *     #defaultMaxDebt}): a client may owe at most one bucket more.
 */
public record Policy(String name, List<Limit> limits, List<CalendarQuota> quotas, Duration maxDebt) {

    /** The most limits one policy may hold. */
    public static final int MAX_LIMITS = 8;

    /** The most calendar quotas one policy may hold. */
    public static final int MAX_QUOTAS = 4;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /**
     * Validates the policy and copies the list of limits; a null {@code maxDebt} is the default.
     *
     * @throws IllegalArgumentException if the name is not 1 to 64 letters, digits, {@code _}, {@code -} or
     *     {@code .}, or there are no limits or more than {@value #MAX_LIMITS}, or more than {@value
     *     #MAX_QUOTAS} quotas, or {@code maxDebt} is negative
     * @throws NullPointerException if the name, a list or one of its elements is null
     */
    public Policy {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(limits, "limits");
        quotas = List.copyOf(Objects.requireNonNull(quotas, "quotas"));
        if (quotas.size() > MAX_QUOTAS) {
            throw new IllegalArgumentException(
                    "policy '" + name + "' may have at most " + MAX_QUOTAS + " calendar quotas, has " + quotas.size());
        }
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "invalid policy name '" + name + "': use 1 to 64 letters, digits, '_', '-' or '.'");
        }
        if (limits.isEmpty() || limits.size() > MAX_LIMITS) {
            throw new IllegalArgumentException(
                    "policy '" + name + "' must have 1 to " + MAX_LIMITS + " limits, has " + limits.size());
        }
        limits = List.copyOf(limits);
        if (maxDebt == null) {
            maxDebt = defaultMaxDebt(limits);
        } else if (maxDebt.isNegative()) {
            throw new IllegalArgumentException("policy '" + name + "': maxDebt must not be negative, was " + maxDebt);
        }
    }

    /**
     * Returns a policy of these limits and quotas with the default {@linkplain #maxDebt() maximum debt}.
     *
     * @throws IllegalArgumentException see the canonical constructor
     * @throws NullPointerException if the name, a list or one of its elements is null
     */
    public Policy(String name, List<Limit> limits, List<CalendarQuota> quotas) {
        this(name, limits, quotas, null);
    }

    /**
     * Returns a policy of token bucket limits only.
     *
     * @throws IllegalArgumentException see the canonical constructor
     * @throws NullPointerException if the name, the list or one of its limits is null
     */
    public Policy(String name, List<Limit> limits) {
        this(name, limits, List.of());
    }

    /**
     * Returns this policy with a calendar quota more, checked with its limits; the name stays, so buckets
     * written under the policy without it carry on.
     *
     * @throws IllegalArgumentException if the policy would hold more than {@value #MAX_QUOTAS} quotas
     * @throws NullPointerException if quota is null
     */
    public Policy withQuota(CalendarQuota quota) {
        List<CalendarQuota> more = new ArrayList<>(quotas);
        more.add(Objects.requireNonNull(quota, "quota"));
        return new Policy(name, limits, more, maxDebt);
    }

    /**
     * Returns this policy with a charge after the fact allowed to take each limit's bucket at most {@code
     * maxDebt} of refill below empty; the name stays, and so do the buckets. {@link Duration#ZERO} lets no charge
     * take a bucket below empty.
     *
     * @throws IllegalArgumentException if maxDebt is negative
     * @throws NullPointerException if maxDebt is null
     */
    public Policy withMaxDebt(Duration maxDebt) {
        return new Policy(name, limits, quotas, Objects.requireNonNull(maxDebt, "maxDebt"));
    }

    /**
     * Returns the default {@linkplain #maxDebt() maximum debt} of a policy of {@code limits}: the longest time
     * any of them takes to fill from empty.
     */
    public static Duration defaultMaxDebt(List<Limit> limits) {
        Duration longest = Duration.ZERO;
        for (Limit limit : limits) {
            Duration fill = limit.refillTime();
            if (fill.compareTo(longest) > 0) {
                longest = fill;
            }
        }
        return longest;
    }

    /** Returns {@link #maxDebt()} in whole microseconds, saturating at {@link Long#MAX_VALUE}. */
    public long maxDebtMicros() {
        long seconds = maxDebt.getSeconds();
        return seconds >= Long.MAX_VALUE / 1_000_000 - 1
                ? Long.MAX_VALUE
                : seconds * 1_000_000 + maxDebt.getNano() / 1_000;
    }

    /** Returns whether this policy holds calendar quotas. */
    public boolean hasQuotas() {
        return !quotas.isEmpty();
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

    /**
     * Returns the smallest capacity among the limits and counts among the quotas: the largest cost a request
     * can ever have.
     */
    public long maxCost() {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < limits.size(); i++) { // indexed: no iterator on the hot path
            min = Math.min(min, limits.get(i).capacity());
        }
        for (int i = 0; i < quotas.size(); i++) {
            min = Math.min(min, quotas.get(i).count());
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
