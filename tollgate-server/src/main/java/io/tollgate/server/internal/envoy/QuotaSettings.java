package io.tollgate.server.internal.envoy;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * How the rate limit quota service ({@code envoy.quota}) hands out quota: every bucket Envoy reports is a key of
 * one policy, and each Envoy that reports it gets slices of that key's bucket.
 *
 * @param policy the policy of every bucket
 * @param reportInterval how often Envoy reports a bucket (its filter's {@code reporting_interval}): each
 *     assignment is sized for this long of the Envoy's reported demand
 * @param assignmentTimeToLive how long an assignment holds unless a newer one replaces it; past it, Envoy falls
 *     back to its {@code expired_assignment_behavior}
 * @param abandonAfter how long a bucket may report no requests before the service abandons it on that stream
 */
public record QuotaSettings(
        Policy policy, Duration reportInterval, Duration assignmentTimeToLive, Duration abandonAfter) {

    /** Unless set: Envoy's reporting interval in its documentation's examples. */
    public static final Duration DEFAULT_REPORT_INTERVAL = Duration.ofSeconds(1);

    /** Unless set: two reports, so that one late report does not expire an assignment. */
    public static final Duration DEFAULT_ASSIGNMENT_TIME_TO_LIVE = Duration.ofSeconds(2);

    /** Unless set. */
    public static final Duration DEFAULT_ABANDON_AFTER = Duration.ofMinutes(1);

    /** The keys of {@code envoy.quota}. */
    public static final ConfigSection SECTION =
            ConfigSection.of("quota", "policy", "report-interval", "assignment-ttl", "abandon-after");

    /**
     * @throws NullPointerException if a value is null
     * @throws IllegalArgumentException if a duration is not positive
     */
    public QuotaSettings {
        Objects.requireNonNull(policy, "policy");
        positive(reportInterval, "report-interval");
        positive(assignmentTimeToLive, "assignment-ttl");
        positive(abandonAfter, "abandon-after");
    }

    /**
     * Reads {@code envoy.quota}: the policy of every bucket, and the service's durations; null if absent.
     *
     * @throws io.tollgate.config.ConfigException if a setting is invalid, naming it
     */
    public static QuotaSettings read(ConfigNode quota, Map<String, Policy> policies) {
        if (!quota.isPresent()) {
            return null;
        }
        quota.checkKeys(SECTION);
        ConfigNode policyNode = quota.child("policy");
        Policy policy = policies.get(policyNode.requiredString());
        if (policy == null) {
            throw policyNode.error("unknown policy '" + policyNode.requiredString() + "'; defined: "
                    + String.join(", ", policies.keySet()));
        }
        ConfigNode interval = quota.child("report-interval");
        ConfigNode ttl = quota.child("assignment-ttl");
        ConfigNode abandon = quota.child("abandon-after");
        return new QuotaSettings(
                policy,
                positive(interval, interval.duration(QuotaSettings.DEFAULT_REPORT_INTERVAL)),
                positive(ttl, ttl.duration(QuotaSettings.DEFAULT_ASSIGNMENT_TIME_TO_LIVE)),
                positive(abandon, abandon.duration(QuotaSettings.DEFAULT_ABANDON_AFTER)));
    }

    private static Duration positive(ConfigNode node, Duration duration) {
        if (duration.isNegative() || duration.isZero()) {
            throw node.error("must be longer than zero, was " + duration.toMillis() + " ms");
        }
        return duration;
    }

    private static void positive(Duration duration, String name) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be longer than zero, was " + duration);
        }
    }

    /** Returns the most tokens one slice may take: the policy's smallest capacity. */
    long largestSlice() {
        long largest = Long.MAX_VALUE;
        for (Limit limit : policy.limits()) {
            largest = Math.min(largest, limit.capacity());
        }
        return Math.min(largest, 0xFFFF_FFFFL); // a token bucket's max_tokens is a uint32
    }

    /** Returns what the policy's tightest limit refills in one report interval, at least one token. */
    long refillPerInterval() {
        long least = Long.MAX_VALUE;
        for (Limit limit : policy.limits()) {
            double perMicro =
                    limit.refill().tokens() / (double) limit.refill().period().toNanos() * 1_000;
            least = Math.min(least, (long) (perMicro * (reportInterval.toNanos() / 1_000)));
        }
        return Math.max(1, least);
    }
}
