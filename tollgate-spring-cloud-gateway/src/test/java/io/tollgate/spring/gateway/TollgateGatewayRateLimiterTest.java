package io.tollgate.spring.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.http.RequestLimiter;
import io.tollgate.spring.RulesInForce;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.core.convert.support.DefaultConversionService;

/** A route's arguments as the rate limiter reads them, and the errors that name a bad one. */
class TollgateGatewayRateLimiterTest {

    private static final Policy TIERED =
            Policy.of("tiered", Limit.of(2, Rate.perSecond(1)), Limit.of(100, Rate.perHour(100)));

    private final RequestLimiter requests =
            RequestLimiter.builder(InMemoryRateLimiter.create()).build();
    private volatile Map<String, Policy> policies = Map.of("tiered", TIERED);
    private final TollgateGatewayRateLimiter limiter = new TollgateGatewayRateLimiter(
            new RulesInForce() {
                @Override
                public RequestLimiter requests() {
                    return requests;
                }

                @Override
                public Map<String, Policy> policies() {
                    return policies;
                }
            },
            new ConfigurationService(
                    new DefaultListableBeanFactory(), DefaultConversionService::getSharedInstance, () -> null),
            true);

    @Test
    void readsTheGatewaysOwnArguments() {
        route("api", Map.of("redis-rate-limiter.replenishRate", "5", "redis-rate-limiter.burstCapacity", "10"));

        Response response = limiter.isAllowed("api", "alice").block();

        assertThat(response.isAllowed()).isTrue();
        assertThat(response.getHeaders())
                .containsEntry("RateLimit", "\"route.api\";r=9;t=1")
                .containsEntry("X-RateLimit-Replenish-Rate", "5")
                .containsEntry("X-RateLimit-Burst-Capacity", "10")
                .containsEntry("X-RateLimit-Requested-Tokens", "1")
                .doesNotContainKey("Content-Type");
    }

    @Test
    void readsATollgatePolicyAndItsCost() {
        route(
                "reports",
                Map.of("tollgate-rate-limiter.policy", "tiered", "tollgate-rate-limiter.requested-tokens", "2"));

        Response first = limiter.isAllowed("reports", "bob").block();
        Response second = limiter.isAllowed("reports", "bob").block();

        assertThat(first.isAllowed()).isTrue();
        assertThat(second.isAllowed()).isFalse();
        assertThat(second.getHeaders()).containsEntry("Retry-After", "2").containsEntry("X-RateLimit-Remaining", "0");
    }

    @Test
    void aPolicyChangedByARefreshDecidesTheRoutesNextRequest() {
        route("reports", Map.of("tollgate-rate-limiter.policy", "tiered"));
        limiter.isAllowed("reports", "erin").block();

        policies = Map.of("tiered", Policy.of("tiered", Limit.of(50, Rate.perSecond(1))));
        Response afterRefresh = limiter.isAllowed("reports", "erin").block();

        assertThat(afterRefresh.getHeaders()).containsEntry("RateLimit-Policy", "\"tiered\";q=50;w=50");
    }

    @Test
    void aRouteWithoutArgumentsUsesTheDefaultFilters() {
        route(RouteDefinitionRouteLocator.DEFAULT_FILTERS, Map.of("tollgate-rate-limiter.policy", "tiered"));

        assertThat(limiter.isAllowed("any-route", "carol").block().isAllowed()).isTrue();
    }

    @Test
    void anUnknownPolicyIsNamedWithTheKnownOnes() {
        assertThatThrownBy(() -> route("reports", Map.of("tollgate-rate-limiter.policy", "teired")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("route reports: tollgate-rate-limiter.policy: unknown policy 'teired'; defined in"
                        + " tollgate.policies: tiered");
    }

    @Test
    void aRouteWithoutALimitIsToldWhatToGive() {
        assertThatThrownBy(() -> route("api", Map.of("redis-rate-limiter.replenishRate", "5")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("route api: give redis-rate-limiter.replenishRate and redis-rate-limiter.burstCapacity,"
                        + " or tollgate-rate-limiter.policy");
        assertThatThrownBy(() -> limiter.isAllowed("unknown", "dave"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("No rate limit for route unknown");
    }

    @Test
    void aReplenishRateBelowOneIsRefused() {
        assertThatThrownBy(() -> route(
                        "api",
                        Map.of("redis-rate-limiter.replenishRate", "0", "redis-rate-limiter.burstCapacity", "1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("route api: redis-rate-limiter.replenishRate must be at least 1, was 0");
    }

    @Test
    void routesWhoseIdsAPolicyNameCannotHoldStillGetBucketsOfTheirOwn() {
        String first = TollgateGatewayRateLimiter.routePolicyName("orders/v1");
        String second = TollgateGatewayRateLimiter.routePolicyName("orders:v1");
        String longOne = TollgateGatewayRateLimiter.routePolicyName("x".repeat(100));

        assertThat(TollgateGatewayRateLimiter.routePolicyName("orders")).isEqualTo("route.orders");
        assertThat(first).isNotEqualTo(second).startsWith("route.orders_v1.");
        assertThat(longOne).hasSizeLessThanOrEqualTo(64);
        assertThat(Policy.of(longOne, Limit.of(1, Rate.perSecond(1))).name()).isEqualTo(longOne);
    }

    private void route(String routeId, Map<String, Object> args) {
        limiter.onApplicationEvent(new FilterArgsEvent(this, routeId, args));
    }
}
