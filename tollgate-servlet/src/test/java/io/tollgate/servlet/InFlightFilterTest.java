package io.tollgate.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.RateLimiter;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisExtension;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Concurrency limits in the servlet filter, on real Jetty applications: a request holds its client's slot
 * until its response has ended, synchronously or asynchronously, and on Redis across instances.
 */
class InFlightFilterTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String CLIENT = "ip:127.0.0.1";

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private JettyApp app(RateLimiter limiter, ConcurrencyLimit limit) throws Exception {
        JettyApp app = JettyApp.start(new TollgateFilter(RequestLimiter.builder(limiter)
                .rule(Rule.builder(limit).path("/exports/**").build())
                .build()));
        resources.add(app);
        return app;
    }

    @Test
    void aThirdExportWaitsForOneOfTwoRunningOnesToEnd() throws Exception {
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();
        ConcurrencyLimit two = ConcurrencyLimit.of("exports", 2);
        JettyApp app = app(limiter, two);

        CompletableFuture<HttpResponse<String>> first = app.getAsync("/exports/1?hold=running");
        CompletableFuture<HttpResponse<String>> second = app.getAsync("/exports/2?hold=running");
        app.awaitHeld("running", 2);
        HttpResponse<String> third = app.get("/exports/3");
        int elsewhere = app.get("/reports").statusCode();
        app.release("running");
        List<Integer> running = List.of(
                first.get(10, TimeUnit.SECONDS).statusCode(),
                second.get(10, TimeUnit.SECONDS).statusCode());
        awaitInFlight(limiter, two, 0);
        HttpResponse<String> fourth = app.get("/exports/4");

        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(third.body()).contains("\"detail\":\"Too many requests in flight for exports; retry in 1 s.\"");
        assertThat(elsewhere).isEqualTo(200);
        assertThat(running).containsExactly(200, 200);
        assertThat(fourth.statusCode()).isEqualTo(200);
        assertThat(limiter.inFlight(CLIENT, two)).isZero();
    }

    @Test
    void aRequestTheApplicationMadeAsynchronousHoldsItsSlotUntilItCompletes() throws Exception {
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();
        ConcurrencyLimit one = ConcurrencyLimit.of("exports", 1);
        JettyApp app = app(limiter, one);

        CompletableFuture<HttpResponse<String>> running = app.getAsync("/exports/1?async&hold=later");
        app.awaitHeld("later", 1);
        int whileRunning = app.get("/exports/2").statusCode();
        app.release("later");
        String answer = running.get(10, TimeUnit.SECONDS).body();
        awaitInFlight(limiter, one, 0);

        assertThat(whileRunning).isEqualTo(429);
        assertThat(answer).isEqualTo("later /exports/1");
        assertThat(app.get("/exports/3").statusCode()).isEqualTo(200);
    }

    @Test
    void aFailedRequestGivesItsSlotBack() throws Exception {
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();
        ConcurrencyLimit one = ConcurrencyLimit.of("exports", 1);
        JettyApp app = app(limiter, one);

        int failed = app.get("/exports/1?fail=disk-full").statusCode();

        assertThat(failed).isEqualTo(500);
        assertThat(limiter.inFlight(CLIENT, one)).isZero();
    }

    @Test
    void onRedisTwoInstancesShareTheSlots() throws Exception {
        redis.server().command("FLUSHALL");
        ConcurrencyLimit one = ConcurrencyLimit.of("exports", 1);
        RedisRateLimiter limiterA =
                RedisRateLimiter.builder().uri(redis.server().uri()).build();
        RedisRateLimiter limiterB =
                RedisRateLimiter.builder().uri(redis.server().uri()).build();
        resources.add(limiterA);
        resources.add(limiterB);
        JettyApp instanceA = app(limiterA, one);
        JettyApp instanceB = app(limiterB, one);

        CompletableFuture<HttpResponse<String>> running = instanceA.getAsync("/exports/1?hold=a");
        instanceA.awaitHeld("a", 1);
        HttpResponse<String> onB = instanceB.get("/exports/2");
        instanceA.release("a");
        int ran = running.get(10, TimeUnit.SECONDS).statusCode();
        awaitInFlight(limiterB, one, 0);
        // Redis on the loopback may answer before the filter looks, and the filter then goes on at once: send
        // until one request has gone the filter's asynchronous way, each after the slot before came back.
        List<HttpResponse<String>> onBAfter = new ArrayList<>();
        do {
            onBAfter.add(instanceB.get("/exports/" + (3 + onBAfter.size())));
            awaitInFlight(limiterB, one, 0);
        } while (onBAfter.size() < 20
                && !onBAfter.get(onBAfter.size() - 1)
                        .headers()
                        .firstValue("X-Dispatch")
                        .orElse("")
                        .equals("ASYNC"));

        assertThat(onB.statusCode()).isEqualTo(429);
        assertThat(ran).isEqualTo(200);
        assertThat(onBAfter).allSatisfy(after -> assertThat(after.statusCode()).isEqualTo(200));
        assertThat(onBAfter.get(onBAfter.size() - 1).headers().firstValue("X-Dispatch"))
                .hasValue("ASYNC");
    }

    /** Waits for slots given back after the client had its answer: the release may trail it a little. */
    private static void awaitInFlight(RateLimiter limiter, ConcurrencyLimit limit, int expected)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (limiter.inFlight(CLIENT, limit) != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }
}
