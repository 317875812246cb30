package io.tollgate.server.internal.envoy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Match;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts the decisions of matched descriptors as {@code tollgate.envoy.decisions} ({@code
 * tollgate_envoy_decisions_total} in Prometheus), tagged with the {@code domain}, the descriptor's entry
 * {@code key}s joined by dots, the {@code result} ({@code ok}, {@code over_limit}, or {@code
 * shadow_over_limit} for what a shadow-mode descriptor would have refused) and whether the failure policy
 * made it ({@code degraded}). Tags hold only the configuration's words, never a client's values, so their
 * number is bounded by the configuration. Thread-safe.
 */
final class EnvoyMetrics {

    private record Tags(String domain, String key, String result, boolean degraded) {}

    private final MeterRegistry registry;
    private final Map<Tags, Counter> counters = new ConcurrentHashMap<>();

    EnvoyMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Registers a counter of this name and removes it again, so that the first real descriptor's counter, made on
     * the thread that answers its call, meets no class loading or lambda linkage there: in the JIT logs of cold
     * bursts whose calls ran out of the store's time budget, the registration's code (Prometheus name checks, a
     * lambda linked) was being compiled during the burst. Not measured on its own. Leaves nothing in the registry.
     */
    void warmUp() {
        for (String result : new String[] {"ok", "over_limit"}) {
            Counter counter = register(new Tags(EnvoyWarmUp.DOMAIN, "warm-up", result, false));
            counter.increment();
            registry.remove(counter);
        }
    }

    void decided(String domain, Match match, boolean allowed, boolean degraded) {
        if (EnvoyWarmUp.isWarmUp(domain)) {
            return; // the warm-up's calls are the server's own, and their domains are answered only meanwhile
        }
        String result = allowed ? "ok" : match.shadow() ? "shadow_over_limit" : "over_limit";
        counters.computeIfAbsent(new Tags(domain, match.keys(), result, degraded), this::register)
                .increment();
    }

    private Counter register(Tags tags) {
        return Counter.builder("tollgate.envoy.decisions")
                .description("Envoy rate limit service decisions per domain and descriptor key")
                .tag("domain", tags.domain())
                .tag("key", tags.key())
                .tag("result", tags.result())
                .tag("degraded", Boolean.toString(tags.degraded()))
                .register(registry);
    }
}
