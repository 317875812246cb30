package io.tollgate.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisExtension;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The filter while the Redis behind its limiter is killed: every request is still answered, as the failure
 * policy says, never with a 500, and a response says it was degraded only if the filter is told to.
 */
class TollgateFilterRedisDownTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Policy ONE = Policy.of("one", Limit.of(1, Rate.perHour(1)));

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        redis.server().heal();
    }

    @Test
    @Timeout(60)
    void failingOpenLetsRequestsThroughAndSaysSoOnlyWhenConfigured() throws Exception {
        RedisRateLimiter limiter = own(RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .failurePolicy(FailurePolicy.ALLOW)
                // the request before the outage takes the bucket's one token, which the deny cache would then
                // refuse from memory, whatever the failure policy: the outage's requests must reach the policy
                .denyCache(0)
                .build());
        JettyApp telling = own(JettyApp.start(new TollgateFilter(RequestLimiter.builder(limiter)
                .rule(Rule.builder(ONE).build())
                .degradedHeader(true)
                .build())));
        JettyApp silent = own(JettyApp.start(new TollgateFilter(
                RequestLimiter.builder(limiter).rule(Rule.builder(ONE).build()).build())));
        assertThat(telling.get("/").headers().firstValue("Tollgate-Degraded")).isEmpty();

        redis.server().kill();
        List<HttpResponse<String>> toldDuringOutage = new ArrayList<>();
        List<HttpResponse<String>> silentDuringOutage = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            toldDuringOutage.add(telling.get("/"));
            silentDuringOutage.add(silent.get("/"));
        }
        redis.server().restart();
        HttpResponse<String> afterRecovery = awaitNotDegraded(telling);

        assertThat(toldDuringOutage).allSatisfy(response -> {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Tollgate-Degraded"))
                    .hasValueSatisfying(value -> assertThat(value)
                            .matches("\"one\";cause=(unreachable|circuit-open|timeout);fallback=allow"));
        });
        assertThat(silentDuringOutage).allSatisfy(response -> {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Tollgate-Degraded")).isEmpty();
            assertThat(response.headers().firstValue("RateLimit")).hasValue("\"one\";r=1;t=0");
        });
        assertThat(afterRecovery.statusCode())
                .as("Redis restarted empty: a full bucket")
                .isEqualTo(200);
    }

    @Test
    @Timeout(60)
    void failingClosedRefusesWithA503ThatSaysTheLimiterIsUnavailableAndARetryAfter() throws Exception {
        RedisRateLimiter limiter = own(RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .failurePolicy(FailurePolicy.DENY)
                .build());
        JettyApp app = own(JettyApp.start(new TollgateFilter(RequestLimiter.builder(limiter)
                .rule(Rule.builder(ONE).build())
                .degradedHeader(true)
                .build())));

        redis.server().kill();
        List<HttpResponse<String>> duringOutage = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            duringOutage.add(app.get("/"));
        }

        assertThat(duringOutage).allSatisfy(response -> {
            assertThat(response.statusCode()).isEqualTo(503);
            assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(response.headers().firstValue("Tollgate-Degraded"))
                    .hasValueSatisfying(value -> assertThat(value).endsWith(";fallback=deny"));
            assertThat(response.body())
                    .contains("\"type\":\"urn:tollgate:limiter-unavailable\"")
                    .contains("\"title\":\"Rate limiter unavailable\"")
                    .contains("\"status\":503");
        });
        assertThat(app.served()).isZero();
    }

    private static HttpResponse<String> awaitNotDegraded(JettyApp app) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            HttpResponse<String> response = app.get("/recovered");
            if (response.headers().firstValue("Tollgate-Degraded").isEmpty()) {
                return response;
            }
            assertThat(System.nanoTime())
                    .as("decisions back on Redis within 20 s of its restart")
                    .isLessThan(deadline);
            Thread.sleep(Duration.ofMillis(50).toMillis());
        }
    }

    private <T extends AutoCloseable> T own(T resource) {
        resources.add(resource);
        return resource;
    }
}
