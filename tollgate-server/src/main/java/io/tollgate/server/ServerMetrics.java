package io.tollgate.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.http.MicrometerRequestMetrics;
import io.tollgate.redis.MicrometerMetrics;
import io.tollgate.server.internal.access.CallerEvents;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.DoubleStream;

/**
 * The server's meters, scraped as Prometheus text at {@code /metrics}. Besides those of the request limiter
 * ({@code tollgate.http.*}) and of a Redis store ({@code tollgate.decisions}, {@code tollgate.redis.*}):
 *
 * <ul>
 *   <li>{@code tollgate.api.decisions} (counter): decisions of the decision API, tags {@code policy}, {@code
 *       outcome} = {@code allowed} or {@code refused}, {@code degraded};
 *   <li>{@code tollgate.api.charges} (counter): charges of {@code POST /v1/charge}, tags {@code policy},
 *       {@code result} = {@code charged} or {@code failed} (the store could not be asked); and {@code
 *       tollgate.api.charged.tokens} (counter): the tokens they took, tag {@code policy};
 *   <li>{@code tollgate.server.requests} (timer, as a histogram): every request the server answered, tags
 *       {@code handler} = {@code check}, {@code charge}, {@code proxy}, {@code health}, {@code metrics},
 *       {@code admin}, {@code page} or {@code none}, and {@code status};
 *   <li>{@code tollgate.config.reloads} (counter): reloads of the configuration, tag {@code result} = {@code
 *       reloaded} or {@code failed}, both from zero at the start; and {@code
 *       tollgate.config.last_reload_successful} (gauge): 1, or 0 while the last reload failed;
 *   <li>{@code tollgate.proxy.upstream} (counter): answers of the upstream, tag {@code status} = its status
 *       code, or {@code unreachable} or {@code timeout} when there was none;
 *   <li>{@code tollgate.callers.requests} (counter): calls by caller ({@link CallerEvents}).
 * </ul>
 *
 * <p>Thread-safe.
 */
final class ServerMetrics {

    /** The histogram's buckets: from a quarter of a millisecond to ten seconds. */
    private static final Duration[] BUCKETS = DoubleStream.of(
                    0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 10_000)
            .mapToObj(millis -> Duration.ofNanos((long) (millis * 1_000_000)))
            .toArray(Duration[]::new);

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final MicrometerRequestMetrics requests = MicrometerRequestMetrics.of(registry);

    // Looked up once per tag set, not per request: the registry builds, sorts and hashes the tags on every
    // lookup, which cost the decision API a few per cent of its throughput.
    private record CheckTags(String policy, boolean allowed, boolean degraded) {}

    private record AnswerTags(String handler, int status) {}

    private final Map<CheckTags, Counter> checks = new ConcurrentHashMap<>();
    private final Map<AnswerTags, Timer> answers = new ConcurrentHashMap<>();
    /** The proxy's upstream counters by status, so that a request does not look its counter up in the registry. */
    private final Map<String, Counter> upstreams = new ConcurrentHashMap<>();
    /** The limiter's meters ({@code tollgate.decisions}, {@code tollgate.redis.*}), on this registry. */
    private final MicrometerMetrics limiter = MicrometerMetrics.of(registry);

    /** What callers of the decision API and Envoy's service did ({@code tollgate.callers.requests}). */
    private final CallerEvents callers = new CallerEvents(registry);

    /** 1 while the configuration in force is the file's last, 0 after a reload of it failed. */
    private final AtomicInteger lastReloadSuccessful = new AtomicInteger(1);

    ServerMetrics() {
        Gauge.builder("tollgate.config.last_reload_successful", lastReloadSuccessful, AtomicInteger::get)
                .description("1 if the last reload of the configuration file succeeded (or none was tried), 0 if it"
                        + " failed and the configuration before it stays in force")
                .register(registry);
        // At zero from the start: an alert on increase() sees the first failure only if the series existed before.
        for (String result : List.of("reloaded", "failed")) {
            reloadCounter(result);
        }
        for (String reason : List.of("max-connections", "head-timeout")) {
            connectionsRefused(reason);
        }
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
    }

    /**
     * Returns the counter of connections closed before a request was read: {@code max-connections} (over {@code
     * server.max-connections}) or {@code head-timeout} (a head slower than {@code server.request-head-timeout}).
     */
    Counter connectionsRefused(String reason) {
        return Counter.builder("tollgate.server.connections.refused")
                .description("Connections closed before a request was read: over server.max-connections, or a"
                        + " request head slower than server.request-head-timeout")
                .tag("reason", reason)
                .register(registry);
    }

    /** Returns where the limiter, in memory or on Redis, records its work: this registry. */
    MicrometerMetrics limiter() {
        return limiter;
    }

    /**
     * Forgets what the warm-up recorded, once it is done and before the server says it is ready, so that an
     * operator finds no trace of it but {@code tollgate_warm_up_decisions_total}: the limiter's meters ({@link
     * MicrometerMetrics#forgetWarmUp}), the decision API's counters of the warm-up's policies, and the request
     * timers (the only requests so far were the warm-up's own). The warm-up ran the very paths real requests
     * run, meters included, so that what it compiled is what they need.
     */
    void forgetWarmUp() {
        limiter.forgetWarmUp();
        for (Map.Entry<CheckTags, Counter> check : checks.entrySet()) {
            if (check.getKey().policy().startsWith(RateLimiter.WARM_UP_POLICY_PREFIX)) {
                registry.remove(check.getValue());
                checks.remove(check.getKey());
            }
        }
        for (Map.Entry<AnswerTags, Timer> answer : answers.entrySet()) {
            registry.remove(answer.getValue());
            answers.remove(answer.getKey());
        }
        for (String name : List.of("tollgate.api.charges", "tollgate.api.charged.tokens")) {
            registry.find(name).meters().stream()
                    .filter(meter -> meter.getId().getTag("policy").startsWith(RateLimiter.WARM_UP_POLICY_PREFIX))
                    .forEach(registry::remove);
        }
    }

    /**
     * Returns where the rules of proxied requests record what they decide: one for the server's life, so that the
     * overload gauges it registers read the protection of the rules in force after a reload.
     */
    MicrometerRequestMetrics requests() {
        return requests;
    }

    /** Returns where what callers did is counted and logged. */
    CallerEvents callers() {
        return callers;
    }

    MeterRegistry registry() {
        return registry;
    }

    /** Returns every meter in the Prometheus text format. */
    String scrape() {
        return registry.scrape();
    }

    /** Counts a reload of the configuration, done or refused. */
    void reloaded(boolean done) {
        reloadCounter(done ? "reloaded" : "failed").increment();
        lastReloadSuccessful.set(done ? 1 : 0);
    }

    private Counter reloadCounter(String result) {
        return Counter.builder("tollgate.config.reloads")
                .description("Reloads of the configuration file: reloaded, or failed (the running one stays)")
                .tag("result", result)
                .register(registry);
    }

    void checked(Policy policy, Decision decision) {
        checks.computeIfAbsent(
                        new CheckTags(policy.name(), decision.allowed(), decision.degraded()),
                        tags -> Counter.builder("tollgate.api.decisions")
                                .description("Decisions of the decision API (POST /v1/check), by policy, outcome and"
                                        + " whether the failure policy decided")
                                .tags(
                                        "policy",
                                        tags.policy(),
                                        "outcome",
                                        tags.allowed() ? "allowed" : "refused",
                                        "degraded",
                                        Boolean.toString(tags.degraded()))
                                .register(registry))
                .increment();
    }

    /** Counts a charge of the decision API, and the tokens it took if it was taken. */
    void charged(Policy policy, long cost, boolean taken) {
        Counter.builder("tollgate.api.charges")
                .description("Charges of the decision API (POST /v1/charge): charged, or failed (nothing taken)")
                .tags("policy", policy.name(), "result", taken ? "charged" : "failed")
                .register(registry)
                .increment();
        if (taken) {
            Counter.builder("tollgate.api.charged.tokens")
                    .description("Tokens the decision API's charges took")
                    .tag("policy", policy.name())
                    .register(registry)
                    .increment(cost);
        }
    }

    void answered(String handler, int status, long nanos) {
        answers.computeIfAbsent(
                        new AnswerTags(handler, status),
                        tags -> Timer.builder("tollgate.server.requests")
                                .description("Requests the server answered, from arrival to the last byte sent")
                                .tags("handler", tags.handler(), "status", Integer.toString(tags.status()))
                                .serviceLevelObjectives(BUCKETS)
                                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Returns how many decisions the failure policy has made so far ({@code tollgate.decisions} with {@code
     * source=fallback}, summed over policies and outcomes).
     */
    long fallbackDecisions() {
        double sum = 0;
        for (Counter counter :
                registry.find("tollgate.decisions").tag("source", "fallback").counters()) {
            sum += counter.count();
        }
        return (long) sum;
    }

    void upstream(String status) {
        upstreams
                .computeIfAbsent(
                        status,
                        tag -> Counter.builder("tollgate.proxy.upstream")
                                .description(
                                        "Requests the proxy sent upstream, by the upstream's status, or why none came"
                                                + " (such as timeout)")
                                .tag("status", tag)
                                .register(registry))
                .increment();
    }
}
