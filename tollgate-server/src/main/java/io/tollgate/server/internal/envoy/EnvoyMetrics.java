package io.tollgate.server.internal.envoy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Match;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts the decisions of matched descriptors as {@code tollgate.envoy.decisions} ({@code
 * tollgate_envoy_decisions_total} in Prometheus), tagged with the {@code domain}, the descriptor's entry
 * {@code key}s joined by dots, the {@code result} ({@code ok}, {@code over_limit}, or {@code
 * shadow_over_limit} for what a shadow-mode descriptor would have refused) and whether the failure policy
 * made it ({@code degraded}); and the calls that the global shadow mode answered {@code OK} instead of {@code
 * OVER_LIMIT}, as {@code tollgate.envoy.global_shadow_mode} per {@code domain}. Tags hold only the configuration's
 * words, never a client's values, so their number is bounded by the configuration; except that a {@code
 * detailed_metric} descriptor's {@code key} holds the request's values too, for at most {@value
 * #MAX_DETAILED_VALUES} different values per descriptor, after which further ones are counted under its keys
 * alone. Thread-safe.
 */
final class EnvoyMetrics {

    /** The most different values a {@code detailed_metric} descriptor's meters name. */
    static final int MAX_DETAILED_VALUES = 100;

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    private record Tags(String domain, String key, String result, boolean degraded) {}

    private final MeterRegistry registry;
    private final Map<Tags, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Counter> shadowed = new ConcurrentHashMap<>();
    /** Per {@code detailed_metric} descriptor (by its place in the files), the values its meters name. */
    private final Map<String, Set<String>> detailed = new ConcurrentHashMap<>();
    /** The detailed descriptors whose values filled their room, each warned about once. */
    private final Set<String> full = ConcurrentHashMap.newKeySet();

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
        counters.computeIfAbsent(new Tags(domain, key(match), result, degraded), this::register)
                .increment();
    }

    /** Counts a call of {@code domain} that the global shadow mode answered {@code OK} instead of refusing it. */
    void globalShadowMode(String domain) {
        shadowed.computeIfAbsent(
                        domain,
                        name -> Counter.builder("tollgate.envoy.global_shadow_mode")
                                .description("Envoy rate limit service calls answered OK by the global shadow mode"
                                        + " instead of OVER_LIMIT")
                                .tag("domain", name)
                                .register(registry))
                .increment();
    }

    /** The {@code key} tag of a match: with its values for a detailed descriptor, while it has room for them. */
    private String key(Match match) {
        String detailedKeys = match.detailedKeys();
        if (detailedKeys == null) {
            return match.keys();
        }
        Set<String> named = detailed.computeIfAbsent(match.configured().path(), path -> ConcurrentHashMap.newKeySet());
        if (named.contains(detailedKeys)) {
            return detailedKeys;
        }
        synchronized (named) {
            if (named.size() < MAX_DETAILED_VALUES) {
                named.add(detailedKeys);
                return detailedKeys;
            }
        }
        if (full.add(match.configured().path())) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "the detailed_metric descriptor {0} has named {1} different values in its metrics; further"
                            + " values are counted under {2}",
                    match.configured().path(),
                    MAX_DETAILED_VALUES,
                    match.keys());
        }
        return match.keys();
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
