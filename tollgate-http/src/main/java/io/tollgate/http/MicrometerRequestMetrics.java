package io.tollgate.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.tollgate.Permit;
import io.tollgate.Priority;
import io.tollgate.RateLimiter;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToIntFunction;

/**
 * Records what a {@link RequestLimiter} decides to a Micrometer {@link MeterRegistry}:
 *
 * <ul>
 *   <li>{@code tollgate.http.decisions} (counter): one per rule checked for a request, tags {@code policy},
 *       {@code outcome} = {@code allowed} or {@code refused}, {@code dry_run} = {@code true} for a rule
 *       that only reports (its {@code refused} count is what it would have refused) or {@code false}, and
 *       {@code degraded} = {@code true} when a failure policy decided because the store could not;
 *   <li>{@code tollgate.http.missing_key} (counter): requests that lacked a rule's key source, tags {@code
 *       policy} and {@code action} = {@code skip}, {@code fallback} or {@code reject};
 *   <li>{@code tollgate.http.listed} (counter): requests of clients on a rule's lists, tags {@code policy} (the
 *       rule's own) and {@code list} = {@code allow} (not limited) or {@code deny} (refused with 403);
 *   <li>{@code tollgate.http.settled_tokens} (counter): tokens settled after responses ({@link ResponseCost}),
 *       tags {@code policy} and {@code action} = {@code charged} (the response cost more than was taken),
 *       {@code refunded} (less), or {@code lost} (the store could not be asked, so the cost taken stays);
 *   <li>{@code tollgate.http.permits} (counter): slots of concurrency limits asked for, tags {@code limit},
 *       {@code outcome} = {@code acquired} or {@code refused}, {@code dry_run} and {@code degraded};
 *   <li>{@code tollgate.http.overload.requests} (counter): requests that {@link OverloadProtection} admitted or
 *       refused with a 503, tags {@code priority} = {@code critical}, {@code default} or {@code sheddable}, and
 *       {@code outcome} = {@code admitted} or {@code shed};
 *   <li>{@code tollgate.http.overload.limit}, {@code tollgate.http.overload.in_flight} and {@code
 *       tollgate.http.overload.waiting} (gauges): the limit it learnt, the requests in flight under it, and those
 *       waiting for room; registered once a request limiter with overload protection is built.
 * </ul>
 *
 * <p>Micrometer is an optional dependency of tollgate-http: applications that use this class add {@code
 * io.micrometer:micrometer-core} themselves. Thread-safe.
 */
public final class MicrometerRequestMetrics implements RequestMetrics {

    /** A {@code tollgate.http.decisions} counter's tags. */
    private record DecisionTags(String policy, boolean allowed, boolean dryRun, boolean degraded) {}

    private final MeterRegistry registry;
    /**
     * The decision counters, looked up once per tag set rather than per request (a registry lookup sorts and
     * copies the tags every time); as many as the registry itself keeps.
     */
    private final Map<DecisionTags, Counter> decisions = new ConcurrentHashMap<>();

    /**
     * What each registry's overload gauges read: the protection of the request limiter built last on it, whichever
     * instance of these metrics it was built with (a reload may make a new one).
     */
    private static final Map<MeterRegistry, AtomicReference<OverloadProtection>> PROTECTIONS =
            Collections.synchronizedMap(new WeakHashMap<>());

    private final Map<String, Counter> overload = new ConcurrentHashMap<>();

    private MicrometerRequestMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Returns metrics that record to {@code registry}.
     *
     * @throws NullPointerException if registry is null
     */
    public static MicrometerRequestMetrics of(MeterRegistry registry) {
        return new MicrometerRequestMetrics(Objects.requireNonNull(registry, "registry"));
    }

    @Override
    public void decided(RuleOutcome outcome) {
        DecisionTags tags = new DecisionTags(
                outcome.policy().name(),
                outcome.decision().allowed(),
                outcome.rule().dryRun(),
                outcome.decision().degraded());
        decisions
                .computeIfAbsent(
                        tags,
                        t -> Counter.builder("tollgate.http.decisions")
                                .description("HTTP requests a rule decided, by policy, outcome, dry run and whether"
                                        + " the failure policy decided")
                                .tags(
                                        "policy",
                                        t.policy(),
                                        "outcome",
                                        t.allowed() ? "allowed" : "refused",
                                        "dry_run",
                                        Boolean.toString(t.dryRun()),
                                        "degraded",
                                        Boolean.toString(t.degraded()))
                                .register(registry))
                .increment();
    }

    /**
     * Removes from the registry what the warm-up's own rules ({@code tollgate.warm-up*} policies) recorded, so
     * that no series of them is left once the application or server is ready. The recording path stays the one
     * real requests run.
     */
    @Override
    public void forgetWarmUp() {
        for (Map.Entry<DecisionTags, Counter> decision : decisions.entrySet()) {
            if (decision.getKey().policy().startsWith(RateLimiter.WARM_UP_POLICY_PREFIX)) {
                registry.remove(decision.getValue());
                decisions.remove(decision.getKey());
            }
        }
        for (String name : List.of(
                "tollgate.http.missing_key",
                "tollgate.http.listed",
                "tollgate.http.settled_tokens",
                "tollgate.http.permits")) {
            registry.find(name).meters().stream()
                    .filter(meter -> {
                        String policy = meter.getId().getTag("policy");
                        return policy != null && policy.startsWith(RateLimiter.WARM_UP_POLICY_PREFIX);
                    })
                    .forEach(registry::remove);
        }
    }

    @Override
    public void overload(Priority priority, boolean shed) {
        String outcome = shed ? "shed" : "admitted";
        overload.computeIfAbsent(
                        priority.text() + outcome,
                        k -> Counter.builder("tollgate.http.overload.requests")
                                .description("Requests overload protection admitted, or refused with a 503")
                                .tag("priority", priority.text())
                                .tag("outcome", outcome)
                                .register(registry))
                .increment();
    }

    @Override
    public void protection(OverloadProtection current) {
        AtomicReference<OverloadProtection> protection;
        boolean first;
        synchronized (PROTECTIONS) {
            first = !PROTECTIONS.containsKey(registry);
            protection = PROTECTIONS.computeIfAbsent(registry, r -> new AtomicReference<>());
        }
        protection.set(current);
        if (first) {
            gauge(
                    protection,
                    "tollgate.http.overload.limit",
                    "The limit on requests in flight learnt",
                    OverloadProtection::limit);
            gauge(
                    protection,
                    "tollgate.http.overload.in_flight",
                    "Requests in flight under the limit",
                    OverloadProtection::inFlight);
            gauge(
                    protection,
                    "tollgate.http.overload.waiting",
                    "Requests waiting for room",
                    OverloadProtection::waiting);
        }
    }

    private void gauge(
            AtomicReference<OverloadProtection> protection,
            String name,
            String description,
            ToIntFunction<OverloadProtection> value) {
        Gauge.builder(name, protection, held -> value.applyAsInt(held.get()))
                .description(description)
                .strongReference(true)
                .register(registry);
    }

    @Override
    public void missingKey(Rule rule) {
        MissingKey onMissing = rule.onMissingKey();
        String action = onMissing instanceof MissingKey.Reject
                ? "reject"
                : onMissing instanceof MissingKey.Fallback ? "fallback" : "skip";
        Counter.builder("tollgate.http.missing_key")
                .description("HTTP requests without the key their rule reads, by rule and what it did: reject,"
                        + " fallback or skip")
                .tags("policy", rule.name(), "action", action)
                .register(registry)
                .increment();
    }

    @Override
    public void settled(RuleOutcome outcome, long difference, boolean landed) {
        String action = !landed ? "lost" : difference > 0 ? "charged" : "refunded";
        Counter.builder("tollgate.http.settled_tokens")
                .description("Tokens settled after the response against the cost taken up front: charged,"
                        + " refunded, or lost when the store could not take them")
                .tags("policy", outcome.policy().name(), "action", action)
                .register(registry)
                .increment(Math.abs(difference));
    }

    @Override
    public void permit(Rule rule, Permit permit) {
        Counter.builder("tollgate.http.permits")
                .description("Slots of a concurrency limit asked for by HTTP requests, by limit, outcome, dry run and"
                        + " whether the failure policy decided")
                .tags(
                        "limit",
                        permit.limit().name(),
                        "outcome",
                        permit.acquired() ? "acquired" : "refused",
                        "dry_run",
                        Boolean.toString(rule.dryRun()),
                        "degraded",
                        Boolean.toString(permit.degraded()))
                .register(registry)
                .increment();
    }

    @Override
    public void listed(Rule rule, PolicyChoice.Listing listing) {
        Counter.builder("tollgate.http.listed")
                .description("HTTP requests a rule's allow or deny list decided without a bucket")
                .tags("policy", rule.name(), "list", listing == PolicyChoice.Listing.ALLOWED ? "allow" : "deny")
                .register(registry)
                .increment();
    }
}
