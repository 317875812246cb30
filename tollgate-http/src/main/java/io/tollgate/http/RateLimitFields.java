package io.tollgate.http;

import io.tollgate.CalendarQuota;
import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes the rate-limit header fields of draft-ietf-httpapi-ratelimit-headers-10 (Structured Fields, RFC
 * 9651) for a set of decisions:
 *
 * <pre>
 * RateLimit-Policy: "per-ip";q=100;w=60
 * RateLimit: "per-ip";r=42;t=3
 * </pre>
 *
 * <p>A token bucket maps to a quota policy as {@code q} = capacity and {@code w} = the seconds an empty
 * bucket takes to fill (capacity ÷ rate, rounded up), and its state as {@code r} = whole tokens remaining
 * and {@code t} = seconds until it is full again (rounded up). A policy of several limits is written as one
 * quota policy per limit, named {@code "NAME.0"}, {@code "NAME.1"} and so on; {@code RateLimit} then
 * reports the limit that decided. The widespread legacy trio {@code X-RateLimit-Limit}, {@code
 * X-RateLimit-Remaining} and {@code X-RateLimit-Reset} (seconds from now) reports the most restrictive
 * decision.
 */
final class RateLimitFields {

    /** The largest Integer that RFC 9651 allows. */
    static final long MAX_INTEGER = 999_999_999_999_999L;

    private RateLimitFields() {}

    /** Returns the {@code RateLimit-Policy} value for the policies of these outcomes, each once. */
    static String policy(List<RuleOutcome> outcomes) {
        Set<String> items = new LinkedHashSet<>();
        for (RuleOutcome outcome : outcomes) {
            addPolicy(items, outcome.policy());
        }
        return String.join(", ", items);
    }

    /** Returns the {@code RateLimit-Policy} value for one policy: an item per limit. */
    static String policy(Policy policy) {
        Set<String> items = new LinkedHashSet<>();
        addPolicy(items, policy);
        return String.join(", ", items);
    }

    /** Returns the {@code RateLimit} value: one item per outcome, for the limit that decided. */
    static String rateLimit(List<RuleOutcome> outcomes) {
        Set<String> items = new LinkedHashSet<>();
        for (RuleOutcome outcome : outcomes) {
            items.add(rateLimit(outcome.policy(), outcome.decision()));
        }
        return String.join(", ", items);
    }

    /** Returns the {@code RateLimit} value for one decision of {@code policy}. */
    static String rateLimit(Policy policy, Decision decision) {
        return string(identifier(policy, decision.limitIndex())) + ";r=" + integer(decision.remaining()) + ";t="
                + integer(ceilSeconds(decision.resetAfterMicros()));
    }

    private static void addPolicy(Set<String> items, Policy policy) {
        for (int i = 0; i < policy.limits().size(); i++) {
            Limit limit = policy.limits().get(i);
            items.add(string(identifier(policy, i)) + ";q=" + integer(limit.capacity()) + ";w="
                    + integer(ceilSeconds(limit.refillTime().toNanos() / 1_000)));
        }
        for (int q = 0; q < policy.quotas().size(); q++) {
            CalendarQuota quota = policy.quotas().get(q);
            items.add(string(identifier(policy, policy.limits().size() + q)) + ";q=" + integer(quota.count()) + ";w="
                    + quota.period().nominalSeconds());
        }
    }

    /** Returns the legacy {@code X-RateLimit-*} trio for the most restrictive of these outcomes. */
    static Map<String, String> legacy(List<RuleOutcome> outcomes) {
        return legacy(mostRestrictive(outcomes).decision());
    }

    /** Returns the legacy {@code X-RateLimit-*} trio for one decision. */
    static Map<String, String> legacy(Decision decision) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("X-RateLimit-Limit", Long.toString(decision.limit().capacity()));
        fields.put("X-RateLimit-Remaining", Long.toString(decision.remaining()));
        fields.put("X-RateLimit-Reset", Long.toString(ceilSeconds(decision.resetAfterMicros())));
        return fields;
    }

    /**
     * Returns the outcome that matters most to the client: of the refusals, the one that keeps it waiting
     * longest; if none, the one with the fewest tokens left.
     */
    static RuleOutcome mostRestrictive(List<RuleOutcome> outcomes) {
        RuleOutcome worst = null;
        for (RuleOutcome outcome : outcomes) {
            if (worst == null || worse(outcome, worst)) {
                worst = outcome;
            }
        }
        if (worst == null) {
            throw new IllegalArgumentException("no outcomes");
        }
        return worst;
    }

    /** Returns the {@code Retry-After} value for a refusal: whole seconds, rounded up, at least 1. */
    static long retryAfterSeconds(Decision refused) {
        return Math.max(1, ceilSeconds(refused.retryAfterMicros()));
    }

    private static boolean worse(RuleOutcome candidate, RuleOutcome current) {
        boolean candidateRefuses = !candidate.decision().allowed();
        boolean currentRefuses = !current.decision().allowed();
        if (candidateRefuses != currentRefuses) {
            return candidateRefuses;
        }
        return candidateRefuses
                ? candidate.decision().retryAfterMicros() > current.decision().retryAfterMicros()
                : candidate.decision().remaining() < current.decision().remaining();
    }

    /** A policy's one limit is the policy's name; several limits, or quotas, are numbered, quotas after limits. */
    private static String identifier(Policy policy, int limitIndex) {
        return policy.limits().size() == 1 && !policy.hasQuotas() ? policy.name() : policy.name() + "." + limitIndex;
    }

    /** Writes a Structured Field String; policy names need no escaping, but keep it total. */
    private static String string(String value) {
        return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /**
     * Returns a Structured Field Integer: at most 15 digits, so the rare capacity above that (a limit may
     * hold up to 2^52 tokens) is written as the largest integer the field can carry.
     */
    private static long integer(long value) {
        return Math.min(value, MAX_INTEGER);
    }

    private static long ceilSeconds(long micros) {
        return micros <= 0 ? 0 : (micros + 999_999) / 1_000_000;
    }
}
