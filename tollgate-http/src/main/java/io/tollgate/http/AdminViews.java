package io.tollgate.http;

import io.tollgate.BucketState;
import io.tollgate.CalendarQuota;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What an operator reads about a running limiter, as maps, lists and scalars that any JSON writer renders:
 * the policies and rules in the configuration's own words, and one key's buckets. The server's admin API and
 * the starter's Actuator endpoint show the same thing; an admin endpoint of one's own may too. Stateless.
 */
public final class AdminViews {

    private AdminViews() {}

    /**
     * Returns the policies, by name, and the rules, in order. A table of API keys is shown as the number of its
     * keys, so that the view holds no client's credentials.
     */
    public static Map<String, Object> policies(Map<String, Policy> policies, List<Rule> rules) {
        Map<String, Object> view = new LinkedHashMap<>();
        Map<String, Object> byName = new LinkedHashMap<>();
        for (Policy policy : new TreeMap<>(policies).values()) {
            List<Object> limits = new ArrayList<>();
            for (Limit limit : policy.limits()) {
                Map<String, Object> settings = new LinkedHashMap<>();
                settings.put("capacity", limit.capacity());
                settings.put("refill", limit.refill().toString());
                settings.put("initial-tokens", limit.initialTokens());
                limits.add(settings);
            }
            if (policy.hasQuotas()) {
                List<Object> quotas = new ArrayList<>();
                for (CalendarQuota quota : policy.quotas()) {
                    quotas.add(Map.of(
                            "count",
                            quota.count(),
                            "period",
                            quota.period().name().toLowerCase(Locale.ROOT),
                            "zone",
                            quota.zone().getId()));
                }
                byName.put(policy.name(), Map.of("limits", limits, "quotas", quotas));
            } else {
                byName.put(policy.name(), Map.of("limits", limits));
            }
        }
        view.put("policies", byName);
        Map<String, Object> concurrencyLimits = new TreeMap<>();
        for (Rule rule : rules) {
            ConcurrencyLimit limit = rule.inFlight();
            if (limit != null) {
                concurrencyLimits.put(
                        limit.name(),
                        Map.of(
                                "max-in-flight",
                                limit.maxInFlight(),
                                "lease",
                                limit.lease().toMillis() + "ms"));
            }
        }
        if (!concurrencyLimits.isEmpty()) {
            view.put("concurrency-limits", concurrencyLimits);
        }
        List<Object> ruleViews = new ArrayList<>();
        for (Rule rule : rules) {
            ruleViews.add(rule(rule));
        }
        view.put("rules", ruleViews);
        return view;
    }

    private static Map<String, Object> rule(Rule rule) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("path", rule.path().toString());
        if (!rule.methods().isEmpty()) {
            view.put("methods", List.copyOf(new TreeSet<>(rule.methods())));
        }
        if (rule.host() != null) {
            view.put("host", rule.host());
        }
        if (rule.requiredHeader() != null) {
            view.put("require-header", rule.requiredHeader());
        }
        view.put("key", rule.key().describe());
        if (rule.policy() != null) {
            view.put("policy", rule.policy().name());
        }
        if (rule.inFlight() != null) {
            view.put("concurrency-limit", rule.inFlight().name());
        }
        view.put("cost", rule.cost());
        view.put("dry-run", rule.dryRun());
        PolicyChoice choice = rule.choice();
        PolicySource source = choice.source();
        if (source instanceof PolicySource.KeyTable table) {
            view.put("policy-from", Map.of("api-keys", table.plans().size() + " keys"));
        } else if (source != null) {
            String[] described = source.describe().split(":", 2);
            view.put("policy-from", Map.of(described[0], described[1]));
        }
        if (!choice.overrides().isEmpty()) {
            Map<String, Object> overrides = new TreeMap<>();
            choice.overrides().forEach((key, policy) -> overrides.put(key, policy.name()));
            view.put("overrides", overrides);
        }
        if (!choice.allow().isEmpty()) {
            view.put("allow", choice.allow());
        }
        if (!choice.deny().isEmpty()) {
            view.put("deny", choice.deny());
        }
        ResponseCost responseCost = rule.responseCost();
        if (responseCost.settles()) {
            Map<String, Object> settled = new LinkedHashMap<>();
            if (responseCost.header() != null) {
                settled.put("header", responseCost.header());
            }
            if (!responseCost.chargeStatuses().isEmpty()) {
                settled.put("charge-statuses", responseCost.chargeStatuses());
            }
            if (!responseCost.refundStatuses().isEmpty()) {
                settled.put("refund-statuses", responseCost.refundStatuses());
            }
            view.put("response-cost", settled);
        }
        return view;
    }

    /**
     * Returns what {@code limiter} holds for {@code key} under {@code policy}: {@code stored} (whether the store
     * keeps buckets of the key at all; left out for a limiter that cannot say), {@code remaining} (the tokens a
     * request could take now), {@code retry_after_ms} (until one token is there), {@code reset_after_ms} (until
     * every limit is full), and the same for each limit, with its {@code limit} and {@code refill}.
     *
     * @throws IllegalStateException if the store cannot answer within its time budget, saying why
     */
    public static Map<String, Object> bucket(RateLimiter limiter, Policy policy, String key) {
        Boolean stored;
        try {
            stored = limiter.holds(key, policy);
        } catch (UnsupportedOperationException e) {
            stored = null;
        }
        BucketState state = limiter.inspect(key, policy);
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("policy", policy.name());
        view.put("key", key);
        if (stored != null) {
            view.put("stored", stored);
        }
        view.put("remaining", state.tokens());
        long retryAfter = 0;
        long reset = 0;
        List<Object> limits = new ArrayList<>();
        for (BucketState.LimitState limit : state.limits()) {
            long limitRetryAfter = untilOneTokenMicros(limit);
            retryAfter = Math.max(retryAfter, limitRetryAfter);
            reset = Math.max(reset, limit.untilFullMicros());
            Map<String, Object> limitView = new LinkedHashMap<>();
            limitView.put("limit", limit.limit().capacity());
            limitView.put("refill", limit.limit().refill().toString());
            limitView.put("remaining", limit.tokens());
            limitView.put("retry_after_ms", ceilMillis(limitRetryAfter));
            limitView.put("reset_after_ms", ceilMillis(limit.untilFullMicros()));
            limits.add(limitView);
        }
        view.put("retry_after_ms", ceilMillis(retryAfter));
        view.put("reset_after_ms", ceilMillis(reset));
        view.put("limits", limits);
        return view;
    }

    /**
     * How long until the bucket holds one token: it is full after {@code untilFull}, and the last {@code
     * capacity - 1} tokens take their refill time before that.
     */
    private static long untilOneTokenMicros(BucketState.LimitState state) {
        if (state.tokens() >= 1) {
            return 0;
        }
        Limit limit = state.limit();
        double microsPerToken =
                (double) limit.refill().ticksPerToken() / limit.refill().ticksPerMicrosecond();
        return Math.max(0, state.untilFullMicros() - (long) ((limit.capacity() - 1) * microsPerToken));
    }

    /** Whole milliseconds, rounded up: a client that waits that long is not early. */
    private static long ceilMillis(long micros) {
        return (micros + 999) / 1_000;
    }
}
