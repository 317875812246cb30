package io.tollgate.server;

import io.tollgate.RateLimiter;
import io.tollgate.http.OverloadProtection;
import io.tollgate.http.RequestLimiter;

/**
 * What one configuration sets to decide requests: its policies and rules, rendered by its responses, on the
 * server's one limiter. A reload builds a new one and swaps it in whole, so a request sees one configuration
 * from start to end, and the buckets, which live in the limiter, are kept.
 *
 * @param config the configuration
 * @param requests the rules of proxied requests, or null without an upstream
 * @param answers renders the decision API's decisions
 * @param checks the decision API
 * @param forwardAuth the rules of forward-auth requests ({@link ForwardAuth}), or null when it is off: the rules of
 *     proxied requests without overload protection, which sees no response of these
 */
record Limits(
        ServerConfig config,
        RequestLimiter requests,
        RequestLimiter answers,
        CheckApi checks,
        RequestLimiter forwardAuth) {

    /**
     * Builds what {@code config} sets, on {@code limiter}, keeping the overload protection of {@code previous} (the
     * limits a reload replaces, or null) where its settings are the same: what it learnt and the requests in flight
     * under it carry over.
     */
    static Limits of(ServerConfig config, RateLimiter limiter, ServerMetrics metrics, Limits previous) {
        RequestLimiter requests = null;
        if (config.upstream() != null) {
            RequestLimiter.Builder builder = config.requestLimiter(limiter).metrics(metrics.requests());
            OverloadProtection protection = protection(config.overload(), previous);
            if (protection != null) {
                builder.overload(protection);
            }
            requests = builder.build();
        }
        RequestLimiter answers = config.responses(limiter).build();
        RequestLimiter forwardAuth = config.forwardAuth()
                ? config.requestLimiter(limiter).metrics(metrics.requests()).build()
                : null;
        return new Limits(
                config,
                requests,
                answers,
                new CheckApi(config.policies(), config.sharedRuleKeys(), limiter, answers, metrics),
                forwardAuth);
    }

    private static OverloadProtection protection(OverloadProtection.Settings settings, Limits previous) {
        if (settings == null) {
            return null;
        }
        OverloadProtection kept = previous == null || previous.requests() == null
                ? null
                : previous.requests().overload();
        return kept != null && kept.settings().equals(settings) ? kept : new OverloadProtection(settings);
    }
}
