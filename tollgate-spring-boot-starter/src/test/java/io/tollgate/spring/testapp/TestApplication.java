package io.tollgate.spring.testapp;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.spring.RateLimit;
import io.tollgate.spring.RateLimitExceededException;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A small Boot application with rules in application-ratelimited.yml and annotated controllers, in a package
 * of its own as applications are: component scanning must not find the starter's configuration classes.
 */
@SpringBootApplication
public class TestApplication {

    /** One permit per request that arrived at {@code /held}, where it waits for a permit of {@link #LET_GO}. */
    public static final Semaphore HELD = new Semaphore(0);

    /** Lets one request held at {@code /held} be answered per permit. */
    public static final Semaphore LET_GO = new Semaphore(0);

    /** The endpoints the tests call. */
    @RestController
    static class Endpoints {

        private static final Policy EXPORTS = Policy.of("exports", Limit.of(1, Rate.perHour(1)));

        private final RateLimiter limiter;

        Endpoints(RateLimiter limiter) {
            this.limiter = limiter;
        }

        /** Limited by the YAML rule on /api/**. */
        @GetMapping("/api/hello")
        Map<String, String> hello() {
            return Map.of("hello", "world");
        }

        /** Limited by the rule on /plans/** that TiersApplicationTest sets, by the caller's plan. */
        @GetMapping("/plans/report")
        Map<String, String> report() {
            return Map.of("report", "ready");
        }

        /** Limited per user by the annotation. */
        @RateLimit(policy = "per-user", key = "#id")
        @GetMapping("/users/{id}/orders")
        Map<String, String> orders(@PathVariable("id") String id) {
            return Map.of("user", id);
        }

        /** Limited per tenant header and globally, in that order. */
        @RateLimit(policy = "per-user", key = "#request.getHeader('X-Tenant')")
        @RateLimit(policy = "global", key = "'all'")
        @GetMapping("/reports")
        Map<String, String> reports(@RequestHeader("X-Tenant") String tenant) {
            return Map.of("tenant", tenant);
        }

        /** Limited per user header; without the header the limit does not apply (the default). */
        @RateLimit(policy = "per-user", key = "#request.getHeader('X-User')")
        @GetMapping("/profile")
        Map<String, String> profile() {
            return Map.of("profile", "public");
        }

        /** Limited per user header; without it the call is rejected with 401. */
        @RateLimit(policy = "per-user", key = "#request.getHeader('X-User')", onMissingKey = "reject:401")
        @GetMapping("/account")
        Map<String, String> account() {
            return Map.of("account", "yours");
        }

        /** Limited per user header; without it, by the client IP. */
        @RateLimit(policy = "per-reader", key = "#request.getHeader('X-User')", onMissingKey = "fallback:ip")
        @GetMapping("/feed")
        Map<String, String> feed() {
            return Map.of("feed", "empty");
        }

        /** Limited by the client IP, the annotation's default key. */
        @RateLimit(policy = "per-user", cost = 2)
        @GetMapping("/search")
        Map<String, String> search() {
            return Map.of("results", "none");
        }

        /** Limited by the client IP, on a Spring MVC method that returns a Mono. */
        @RateLimit(policy = "per-stream")
        @GetMapping("/stream")
        Mono<Map<String, String>> stream() {
            return Mono.just(Map.of("stream", "open"));
        }

        /** Limited in code, refusing with the exception. */
        /** Answers once the test lets it go ({@link #LET_GO}), at most 10 s later: to hold a request in flight. */
        @GetMapping("/held")
        Map<String, String> held() throws InterruptedException {
            HELD.release();
            LET_GO.tryAcquire(10, TimeUnit.SECONDS);
            return Map.of("held", "done");
        }

        @GetMapping("/exports/{tenant}")
        Map<String, String> export(@PathVariable("tenant") String tenant) {
            Decision decision = limiter.tryAcquire("export:" + tenant, EXPORTS);
            if (!decision.allowed()) {
                throw new RateLimitExceededException(EXPORTS, decision);
            }
            return Map.of("export", tenant);
        }
    }
}
