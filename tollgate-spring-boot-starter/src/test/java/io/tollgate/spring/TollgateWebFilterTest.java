package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.http.HttpMethod;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

/** The web filter's mapping: servlet URL patterns, as tollgate.filter.url-patterns gives them. */
class TollgateWebFilterTest {

    private static final Policy NONE_LEFT = Policy.of("none-left", Limit.of(1, Rate.perHour(1)));

    @ParameterizedTest(name = "{0} maps {1}: {2}")
    @CsvSource({
        "/*, /anything/at/all, true",
        "/api/*, /api, true",
        "/api/*, /api/orders/7, true",
        "/api/*, /apiary, false",
        "*.json, /reports/today.json, true",
        "*.json, /reports/json, false",
        "/exact, /exact, true",
        "/exact, /exact/more, false"
    })
    void limitsOnlyThePathsItsUrlPatternsMap(String pattern, String path, boolean mapped) {
        RequestLimiter requests = RequestLimiter.builder(InMemoryRateLimiter.create())
                .rule(Rule.builder(NONE_LEFT).build())
                .build();
        TollgateWebFilter filter = new TollgateWebFilter(requests, TollgateWebFilter.DEFAULT_ORDER, List.of(pattern));

        MockServerWebExchange first = exchange(path);
        MockServerWebExchange second = exchange(path);
        filter.filter(first, exchange -> Mono.empty()).block();
        filter.filter(second, exchange -> Mono.empty()).block();

        assertThat(second.getResponse().getStatusCode() != null
                        && second.getResponse().getStatusCode().value() == 429)
                .isEqualTo(mapped);
        assertThat(first.getResponse().getHeaders().containsHeader("RateLimit")).isEqualTo(mapped);
    }

    @ParameterizedTest
    @CsvSource({"//api/x", "/api//x", "/api/./x", "/x/../api/x", "/x/..;/api/x", "/api/x;v=1"})
    void everyFormOfAPathIsMappedAndCountedAsItsNormalForm(String path) {
        RequestLimiter requests = RequestLimiter.builder(InMemoryRateLimiter.create())
                .rule(Rule.builder(NONE_LEFT).path("/api/**").build())
                .build();
        TollgateWebFilter filter = new TollgateWebFilter(requests, TollgateWebFilter.DEFAULT_ORDER, List.of("/api/*"));

        MockServerWebExchange first = exchange(URI.create("http://localhost" + path));
        MockServerWebExchange second = exchange(URI.create("http://localhost" + path));
        filter.filter(first, exchange -> Mono.empty()).block();
        filter.filter(second, exchange -> Mono.empty()).block();

        assertThat(first.getResponse().getHeaders().containsHeader("RateLimit")).isTrue();
        assertThat(second.getResponse().getStatusCode().value()).isEqualTo(429);
    }

    @ParameterizedTest
    @CsvSource({"/api%5Cx, backslash", "/api%2Fx, encoded '/'", "/api/%c0%ae/x, not UTF-8"})
    void anAmbiguousPathIsRefusedWith400SayingWhy(String path, String why) {
        RequestLimiter requests = RequestLimiter.builder(InMemoryRateLimiter.create())
                .rule(Rule.builder(NONE_LEFT).path("/api/**").build())
                .build();
        TollgateWebFilter filter = new TollgateWebFilter(requests, TollgateWebFilter.DEFAULT_ORDER, List.of("/*"));
        AtomicBoolean served = new AtomicBoolean();

        MockServerWebExchange exchange = exchange(URI.create("http://localhost" + path));
        filter.filter(exchange, chained -> Mono.fromRunnable(() -> served.set(true)))
                .block();

        assertThat(served).isFalse();
        assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(400);
        assertThat(exchange.getResponse().getBodyAsString().block()).contains(why);
    }

    private static MockServerWebExchange exchange(URI uri) {
        return MockServerWebExchange.from(MockServerHttpRequest.method(HttpMethod.GET, uri)
                .remoteAddress(new InetSocketAddress("192.0.2.1", 40000)));
    }

    private static MockServerWebExchange exchange(String path) {
        return MockServerWebExchange.from(
                MockServerHttpRequest.get(path).remoteAddress(new InetSocketAddress("192.0.2.1", 40000)));
    }
}
