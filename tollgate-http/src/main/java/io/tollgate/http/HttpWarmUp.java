package io.tollgate.http;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.WarmUpKeys;
import java.time.Duration;
import java.util.List;

/**
 * Prepares a {@link RequestLimiter} for traffic: warms its limiter, then checks and answers rules of its own,
 * allowed and refused, on keys no client uses, so that the first real requests pay for no class loading or
 * compilation. See {@link RequestLimiter#warmUp}.
 */
final class HttpWarmUp {

    private static final int CHECKS = 2_000;
    private static final Policy PASSING =
            Policy.of(RateLimiter.WARM_UP_POLICY_PREFIX + "-http", Limit.of(1_000_000, Rate.perSecond(1_000_000)));
    private static final Policy REFUSING =
            Policy.of(RateLimiter.WARM_UP_POLICY_PREFIX + "-http-refused", Limit.of(1, Rate.perSecond(1_000)));

    private HttpWarmUp() {}

    static boolean warmUp(RequestLimiter requests, RateLimiter limiter, RequestMetrics metrics, Duration maxTime) {
        long start = System.nanoTime();
        boolean warm = limiter.warmUp(maxTime);
        long maxNanos = Math.min(maxTime.toMillis(), Long.MAX_VALUE / 2_000_000) * 1_000_000;
        Rule passing = Rule.builder(PASSING).build();
        Rule refusing = Rule.builder(REFUSING).build();
        for (int i = 0; i < CHECKS; i++) {
            if (System.nanoTime() - start > maxNanos) {
                warm = false;
                break;
            }
            String key = WarmUpKeys.key(i % 8);
            RuleOutcome allowed = requests.check(passing, key);
            requests.respond(List.of(allowed));
            requests.respond(List.of(allowed, requests.check(refusing, key)));
        }
        metrics.forgetWarmUp();
        return warm;
    }
}
