package io.tollgate.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.ResponseCost;
import io.tollgate.http.Rule;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisExtension;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Rules that settle their cost after the response, on a real Jetty application: the filter hands the
 * response's status and header fields to the request limiter however the response ends (the chain returns,
 * the application goes asynchronous, the application throws), and on Redis also when the filter itself
 * decided asynchronously.
 */
class ResponseCostFilterTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String CLIENT = "ip:127.0.0.1";

    /** Ten tokens, one a second: the seconds until full count the tokens spent. */
    // owing up to 30 s of refill: the tests run a bucket 15 tokens into debt
    private final Policy tokens =
            Policy.of("llm", Limit.of(10, Rate.perSecond(1))).withMaxDebt(Duration.ofSeconds(30));

    private final ManualTimeSource time = new ManualTimeSource(1_000_000_000_000L);
    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private JettyApp app(RateLimiter limiter, Rule rule) throws Exception {
        JettyApp app = JettyApp.start(
                new TollgateFilter(RequestLimiter.builder(limiter).rule(rule).build()));
        resources.add(app);
        return app;
    }

    private Rule tokensUsed() {
        return Rule.builder(tokens)
                .path("/v1/**")
                .responseCost(ResponseCost.fromHeader("X-Tokens-Used").refunding("5xx"))
                .build();
    }

    /** Waits for a settlement that lands after the client has its answer: it may trail the answer a little. */
    private static Duration untilFull(RateLimiter limiter, Policy policy, Duration expected)
            throws InterruptedException {
        Duration seen = limiter.inspect(CLIENT, policy).untilFull();
        for (int i = 0; i < 100 && !seen.equals(expected); i++) {
            Thread.sleep(50);
            seen = limiter.inspect(CLIENT, policy).untilFull();
        }
        return seen;
    }

    @Test
    void theResponseHeaderChargesTheRestOfTheCostAndTheNextRequestWaitsOutTheDebt() throws Exception {
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        JettyApp app = app(limiter, tokensUsed());

        HttpResponse<String> costly = app.get("/v1/completions?used=25");
        HttpResponse<String> next = app.get("/v1/completions?used=1");

        assertThat(costly.statusCode()).isEqualTo(200);
        assertThat(costly.headers().firstValue("RateLimit")).hasValue("\"llm\";r=9;t=1");
        assertThat(next.statusCode()).isEqualTo(429);
        assertThat(next.headers().firstValue("Retry-After")).hasValue("16");
    }

    @Test
    void aResponseTheApplicationSendsAsynchronouslyIsSettledWhenItCompletes() throws Exception {
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        JettyApp app = app(limiter, tokensUsed());

        HttpResponse<String> answer = app.get("/v1/completions?used=7&async");

        assertThat(answer.body()).isEqualTo("later /v1/completions");
        assertThat(untilFull(limiter, tokens, Duration.ofSeconds(7))).isEqualTo(Duration.ofSeconds(7));
    }

    @Test
    void aServerErrorAndAnApplicationThatThrowsAreRefunded() throws Exception {
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        JettyApp app = app(limiter, tokensUsed());

        int unavailable = app.get("/v1/completions?status=503&used=9").statusCode();
        int thrown = app.get("/v1/completions?fail=boom").statusCode();

        assertThat(List.of(unavailable, thrown)).containsExactly(503, 500);
        assertThat(limiter.inspect(CLIENT, tokens).untilFull()).isZero();
    }

    @Test
    void onlyFailedLoginsCountAndTheFourthIsRefused() throws Exception {
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        Policy logins = Policy.of("logins", Limit.of(3, Rate.perHour(3)));
        JettyApp app = app(
                limiter,
                Rule.builder(logins)
                        .path("/login")
                        .responseCost(ResponseCost.onlyForStatuses("401", "403"))
                        .build());

        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            statuses.add(app.get("/login").statusCode());
        }
        for (int i = 0; i < 4; i++) {
            statuses.add(app.get("/login?status=401").statusCode());
        }

        assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 401, 401, 401, 429);
    }

    @Test
    void onRedisADecisionTakenAsynchronouslyIsSettledAfterTheResumedRequest() throws Exception {
        redis.server().command("FLUSHALL");
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .clientClock(time)
                .timeout(Duration.ofSeconds(5))
                .build();
        resources.add(limiter);
        JettyApp app = app(limiter, tokensUsed());
        // Redis answers the first decision late, so that the filter cannot find it made when it asks (on a fast
        // loopback it sometimes was): the request must be resumed asynchronously once Redis answers
        redis.server().pause();
        Thread resume = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            redis.server().resume();
        });
        resume.start();

        HttpResponse<String> costly = app.get("/v1/completions?used=25");
        resume.join();
        Duration debt = untilFull(limiter, tokens, Duration.ofSeconds(25));
        HttpResponse<String> next = app.get("/v1/completions?used=1");

        assertThat(costly.headers().firstValue("X-Dispatch")).hasValue("ASYNC");
        assertThat(debt).isEqualTo(Duration.ofSeconds(25));
        assertThat(next.statusCode()).isEqualTo(429);
        assertThat(next.headers().firstValue("Retry-After")).hasValue("16");
    }
}
