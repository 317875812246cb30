package com.example.orders;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.spring.RateLimit;
import io.tollgate.spring.RateLimitExceededException;
import java.util.List;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** The orders API. Every request under /api/ is limited per API key by the rule in application.yml. */
@RestController
public class OrderController {

    private static final Policy EXPORTS = Policy.of("exports", Limit.of(2, Rate.perHour(2)));

    private final RateLimiter limiter;

    public OrderController(RateLimiter limiter) {
        this.limiter = limiter;
    }

    /** Lists the orders; only the rule limits it. */
    @GetMapping("/api/orders")
    public List<Map<String, Object>> orders() {
        return List.of(Map.of("id", 1, "item", "tea"));
    }

    /** One user's orders: each user also has a limit of their own. */
    @RateLimit(policy = "per-user", key = "#userId")
    @GetMapping("/api/users/{userId}/orders")
    public List<Map<String, Object>> ordersOf(@PathVariable String userId) {
        return List.of(Map.of("id", 1, "user", userId));
    }

    /** Starts an export: expensive, so limited in code, per tenant, on the same limiter. */
    @PostMapping("/api/tenants/{tenant}/exports")
    public Map<String, Object> export(@PathVariable String tenant) {
        Decision decision = limiter.tryAcquire("export:" + tenant, EXPORTS);
        if (!decision.allowed()) {
            throw new RateLimitExceededException(EXPORTS, decision); // answered 429, like the filter
        }
        return Map.of("tenant", tenant, "status", "started");
    }
}
