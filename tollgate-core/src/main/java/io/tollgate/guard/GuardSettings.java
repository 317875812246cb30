package io.tollgate.guard;

import io.tollgate.FailurePolicy;
import io.tollgate.TimeSource;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * How a {@link GuardedRateLimiter} guards its store; the limiters' builders check each value and name it.
 *
 * @param timeout the time budget of a decision
 * @param failurePolicy what decides when the store cannot, unless {@code failurePolicies} names the policy
 * @param failurePolicies failure policies by policy name
 * @param expectedInstances how many instances share the store: {@code LOCAL} takes this share of a bucket; 0 to
 *     take the share of the live instances the store counts ({@link GuardedRateLimiter#instancesCounted})
 * @param breakerThreshold consecutive failures that open a node's circuit
 * @param breakerFirstPause how long an open circuit waits before its first probe
 * @param breakerLongestPause the longest it waits, doubling from the first
 * @param denyCacheKeys how many refused keys to remember; 0 turns the deny cache off
 * @param denyCacheMaxAge how long after its request was sent a remembered refusal is relied on at most
 * @param leasedPolicies the names of the policies whose hot keys are answered from leases (tokens taken from the
 *     store ahead of the requests, see {@link GuardedRateLimiter}); {@value #EVERY_POLICY} for every policy; empty
 *     for none
 * @param metrics told of every decision, failure and breaker
 * @param timeSource the clock of the budget, the deny cache and the fallback
 * @param log where degraded decisions are logged
 */
public record GuardSettings(
        Duration timeout,
        FailurePolicy failurePolicy,
        Map<String, FailurePolicy> failurePolicies,
        int expectedInstances,
        int breakerThreshold,
        Duration breakerFirstPause,
        Duration breakerLongestPause,
        long denyCacheKeys,
        Duration denyCacheMaxAge,
        Set<String> leasedPolicies,
        MetricsRecorder metrics,
        TimeSource timeSource,
        System.Logger log) {

    /** The name in {@code leasedPolicies} that leases every policy's hot keys. */
    public static final String EVERY_POLICY = "*";

    /** @throws NullPointerException if a value is null */
    public GuardSettings {
        leasedPolicies = Set.copyOf(leasedPolicies);
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(failurePolicy, "failurePolicy");
        failurePolicies = Map.copyOf(failurePolicies);
        Objects.requireNonNull(breakerFirstPause, "breakerFirstPause");
        Objects.requireNonNull(breakerLongestPause, "breakerLongestPause");
        Objects.requireNonNull(denyCacheMaxAge, "denyCacheMaxAge");
        Objects.requireNonNull(metrics, "metrics");
        Objects.requireNonNull(timeSource, "timeSource");
        Objects.requireNonNull(log, "log");
    }

    /** Returns the failure policy of {@code policyName}. */
    FailurePolicy failurePolicy(String policyName) {
        return failurePolicies.getOrDefault(policyName, failurePolicy);
    }
}
