package io.tollgate.spring.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.gateway.testapp.GatewayTestApplication;
import io.tollgate.testing.RedisExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The migration from Spring Cloud Gateway's RedisRateLimiter is one line: the same route (one request a
 * minute), run first as written for {@code #{@redisRateLimiter}}, then with that line changed to {@code
 * #{@tollgateRateLimiter}}, admits the same requests, and the answers keep the gateway's {@code X-RateLimit-*} fields and gain {@code
 * Retry-After} and the IETF {@code RateLimit} fields.
 */
class GatewayMigrationTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Upstream UPSTREAM = Upstream.startOrFail();

    private final HttpClient client = HttpClient.newHttpClient();

    @AfterAll
    static void stopUpstream() {
        UPSTREAM.close();
    }

    /** A route as a Spring Cloud Gateway user writes it for the gateway's own Redis limiter. */
    static List<String> routeWithRedisRateLimiter() {
        String filter = "spring.cloud.gateway.server.webflux.routes[0].filters[0].";
        return List.of(
                "spring.cloud.gateway.server.webflux.routes[0].id=api",
                "spring.cloud.gateway.server.webflux.routes[0].uri=" + UPSTREAM.uri(),
                "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/api/**",
                filter + "name=RequestRateLimiter",
                filter + "args.rate-limiter=#{@redisRateLimiter}",
                filter + "args.key-resolver=#{@userKeyResolver}",
                // one request a minute, written as the gateway writes rates below one a second; at 1/s with a
                // burst of 3, its limiter (which counts whole seconds of Redis time) admits a fourth request
                // whenever the four straddle a second
                filter + "args.redis-rate-limiter.replenishRate=1",
                filter + "args.redis-rate-limiter.burstCapacity=60",
                filter + "args.redis-rate-limiter.requestedTokens=60");
    }

    @Test
    void changingTheRateLimiterLineIsTheWholeMigration() throws Exception {
        List<String> before = routeWithRedisRateLimiter();
        List<String> after = before.stream()
                .map(line -> line.replace("#{@redisRateLimiter}", "#{@tollgateRateLimiter}"))
                .toList();

        List<HttpResponse<String>> asBefore = fourRequests(before);
        List<HttpResponse<String>> asAfter = fourRequests(after);

        assertThat(changedLines(before, after)).isEqualTo(1);
        assertThat(asBefore).extracting(HttpResponse::statusCode).containsExactly(200, 429, 429, 429);
        assertThat(asAfter).extracting(HttpResponse::statusCode).containsExactly(200, 429, 429, 429);
        for (String field : List.of(
                "X-RateLimit-Remaining",
                "X-RateLimit-Replenish-Rate",
                "X-RateLimit-Burst-Capacity",
                "X-RateLimit-Requested-Tokens")) {
            assertThat(asAfter.get(0).headers().firstValue(field))
                    .as(field)
                    .isEqualTo(asBefore.get(0).headers().firstValue(field));
        }
        assertThat(asBefore.get(3).headers().firstValue("Retry-After")).isEmpty();
        assertThat(asAfter.get(3).headers().firstValue("Retry-After")).hasValue("60");
        assertThat(asAfter.get(3).headers().firstValue("RateLimit")).hasValue("\"route.api\";r=0;t=60");
        assertThat(redis.server().command("EXISTS", "tollgate:route.api:grace")).isEqualTo(1L);
    }

    /** Runs the gateway with the route and sends four requests of one user through it. */
    private List<HttpResponse<String>> fourRequests(List<String> route) throws Exception {
        List<String> properties = new ArrayList<>(route);
        properties.add("server.port=0");
        properties.add("spring.data.redis.host=127.0.0.1");
        properties.add("spring.data.redis.port=" + redis.server().port());
        if (route.stream().anyMatch(line -> line.contains("#{@redisRateLimiter}"))) {
            properties.add("tollgate.warm-up=false"); // Tollgate decides nothing on that route: no need to warm it
        }
        try (ConfigurableApplicationContext gateway = new SpringApplicationBuilder(GatewayTestApplication.class)
                .properties(properties.toArray(String[]::new))
                .run()) {
            String port = gateway.getEnvironment().getProperty("local.server.port");
            List<HttpResponse<String>> responses = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                responses.add(client.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/orders"))
                                .header("X-User", "grace")
                                .build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            return responses;
        }
    }

    private static long changedLines(List<String> before, List<String> after) {
        long changed = 0;
        for (int i = 0; i < before.size(); i++) {
            if (!before.get(i).equals(after.get(i))) {
                changed++;
            }
        }
        return changed;
    }
}
