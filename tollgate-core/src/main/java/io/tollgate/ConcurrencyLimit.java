package io.tollgate;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A limit on the requests of one client that may be in flight at once, such as at most 5 report exports per
 * customer: a request takes a {@link Permit} before it starts and gives it back when it ends, and a request
 * that finds every slot taken is refused at once.
 *
 * <p>The name identifies the slots, as a policy's name identifies its buckets: two limits with the same name
 * share them. On Redis each permit is a lease that its instance renews while the permit is open, so the slots
 * of an instance that dies come back within {@code lease}, and a permit is never held for ever by a process
 * that no longer exists. In memory the slots die with the process, and the lease plays no part.
 *
 * @param name the limit's name: 1 to 64 letters, digits, {@code _}, {@code -} or {@code .}
 * @param maxInFlight the most permits open at once per client key, 1 to {@value #MAX_IN_FLIGHT}
 * @param lease how long a permit outlives its instance on Redis, whole milliseconds from 1 s to 1 day
 */
public record ConcurrencyLimit(String name, int maxInFlight, Duration lease) {

    /** The most permits one limit may allow at once per key. */
    public static final int MAX_IN_FLIGHT = 100_000;

    /** The lease of {@link #of}: a permit of an instance that died is given back within 30 seconds. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /**
     * Validates the limit.
     *
     * @throws IllegalArgumentException if the name, the maximum or the lease is out of range, naming it
     * @throws NullPointerException if the name or lease is null
     */
    public ConcurrencyLimit {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(lease, "lease");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "invalid concurrency limit name '" + name + "': use 1 to 64 letters, digits, '_', '-' or '.'");
        }
        if (maxInFlight < 1 || maxInFlight > MAX_IN_FLIGHT) {
            throw new IllegalArgumentException("concurrency limit '" + name + "': max in flight must be 1 to "
                    + MAX_IN_FLIGHT + ", was " + maxInFlight);
        }
        if (lease.compareTo(Duration.ofSeconds(1)) < 0
                || lease.compareTo(Duration.ofDays(1)) > 0
                || lease.toNanos() % 1_000_000 != 0) {
            throw new IllegalArgumentException("concurrency limit '" + name
                    + "': the lease must be whole milliseconds from 1 s to 1 day, was " + lease);
        }
    }

    /**
     * Returns a limit of {@code maxInFlight} requests at once per key, with the {@linkplain #DEFAULT_LEASE
     * default lease}.
     *
     * @throws IllegalArgumentException if the name or maximum is out of range
     * @throws NullPointerException if name is null
     */
    public static ConcurrencyLimit of(String name, int maxInFlight) {
        return new ConcurrencyLimit(name, maxInFlight, DEFAULT_LEASE);
    }

    /**
     * Returns this limit with another lease.
     *
     * @throws IllegalArgumentException if the lease is out of range
     * @throws NullPointerException if lease is null
     */
    public ConcurrencyLimit withLease(Duration lease) {
        return new ConcurrencyLimit(name, maxInFlight, lease);
    }
}
