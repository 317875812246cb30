package io.tollgate.server;

import io.tollgate.RateLimiter;
import io.tollgate.http.MicrometerRequestMetrics;
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
 */
record Limits(ServerConfig config, RequestLimiter requests, RequestLimiter answers, CheckApi checks) {

    /** Builds what {@code config} sets, on {@code limiter}. */
    static Limits of(ServerConfig config, RateLimiter limiter, ServerMetrics metrics) {
        RequestLimiter requests = config.upstream() == null
                ? null
                : config.requestLimiter(limiter)
                        .metrics(MicrometerRequestMetrics.of(metrics.registry()))
                        .build();
        RequestLimiter answers = config.responses(limiter).build();
        return new Limits(config, requests, answers, new CheckApi(config.policies(), limiter, answers, metrics));
    }
}
