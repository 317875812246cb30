package io.tollgate.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.http.ClientKey;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisExtension;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The filter protecting real Jetty applications whose limits live in a real Redis. */
class TollgateFilterOnRedisTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void emptyRedis() {
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void close() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        redis.server().resume();
    }

    @Test
    void aBurstPassesAndThenA429UntilTheRetryAfterHasPassed() throws Exception {
        ManualTimeSource time = new ManualTimeSource(1_000_000_000_000L);
        RedisRateLimiter limiter = own(RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .clientClock(time)
                .build());
        Policy threePer10s = Policy.of("per-ip", Limit.of(3, Rate.of(1, Duration.ofSeconds(10))));
        JettyApp app = own(JettyApp.start(new TollgateFilter(RequestLimiter.builder(limiter)
                .rule(Rule.builder(threePer10s).path("/api/**").build())
                .build())));

        List<Integer> burst = List.of(
                app.get("/api/a").statusCode(),
                app.get("/api/b").statusCode(),
                app.get("/api/c").statusCode());
        HttpResponse<String> refused = app.get("/api/d");
        time.advance(Duration.ofSeconds(10).minusMillis(1));
        int early = app.get("/api/e").statusCode();
        time.advance(Duration.ofMillis(1));
        HttpResponse<String> onTime = app.get("/api/f");

        assertThat(burst).containsOnly(200);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("10");
        assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=30");
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.body()).contains("\"status\":429", "\"policies\":[\"per-ip\"]");
        assertThat(early).isEqualTo(429);
        assertThat(onTime.statusCode()).isEqualTo(200);
        assertThat(onTime.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=30");
        assertThat(app.served()).isEqualTo(4);
    }

    @Test
    @Timeout(60)
    void aFrozenRedisHoldsNoContainerThread() throws Exception {
        CountingLimiter limiter = new CountingLimiter(own(RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(Duration.ofSeconds(4)) // Redis stays frozen for well under that
                .build()));
        Policy roomy = Policy.of("roomy", Limit.of(1_000, Rate.perSecond(1_000)));
        // 8 threads, 2 of which accept and select: blocking requests would run out of threads after ~6
        JettyApp app = own(JettyApp.startWithThreads(
                new TollgateFilter(RequestLimiter.builder(limiter)
                        .rule(Rule.builder(roomy).path("/api/**").build())
                        .build()),
                8));
        app.get("/api/warm-up");

        redis.server().pause();
        List<CompletableFuture<HttpResponse<String>>> waiting = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            waiting.add(app.getAsync("/api/" + i));
        }
        awaitAsyncCalls(limiter, 13);
        HttpResponse<String> unlimited = app.get("/health");
        boolean noneAnsweredWhileFrozen = waiting.stream().noneMatch(CompletableFuture::isDone);
        redis.server().resume();

        assertThat(unlimited.statusCode()).isEqualTo(200);
        assertThat(noneAnsweredWhileFrozen).isTrue();
        for (CompletableFuture<HttpResponse<String>> response : waiting) {
            HttpResponse<String> answered = response.get(20, TimeUnit.SECONDS);
            assertThat(answered.statusCode()).isEqualTo(200);
            assertThat(answered.headers().firstValue("X-Dispatch")).hasValue("ASYNC");
            assertThat(answered.headers().firstValue("RateLimit")).isPresent();
        }
    }

    @Test
    void withAsyncTurnedOffTheDecisionIsAwaitedOnTheContainerThread() throws Exception {
        RedisRateLimiter limiter =
                own(RedisRateLimiter.builder().uri(redis.server().uri()).build());
        JettyApp app = own(JettyApp.startDeclared(
                Map.of("config", "classpath:tollgate.yaml", "limiter", "attribute:app.limiter", "async", "false"),
                context -> context.setAttribute("app.limiter", limiter)));

        HttpResponse<String> first = app.get("/api/x", "X-API-Key", "k");
        HttpResponse<String> second = app.get("/api/x", "X-API-Key", "k");
        HttpResponse<String> third = app.get("/api/x", "X-API-Key", "k");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("X-Dispatch")).hasValue("REQUEST");
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(third.statusCode()).isEqualTo(429);
    }

    @Test
    @Timeout(120)
    void threeApplicationsOnOneRedisAdmitExactlyTheCapacityBetweenThem() throws Exception {
        int capacity = 60;
        Policy shared = Policy.of("per-key", Limit.of(capacity, Rate.perHour(1)));
        List<JettyApp> apps = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            // each instance has its own limiter and connection, as separate servers would, and warms up before
            // it serves, as the starter and the server do: a cold JVM's first decisions may outlast the 50 ms
            // budget, and one that does while Redis answers is refused as unavailable (503), never guessed
            RedisRateLimiter limiter =
                    own(RedisRateLimiter.builder().uri(redis.server().uri()).build());
            RequestLimiter requests = RequestLimiter.builder(limiter)
                    .rule(Rule.builder(shared)
                            .key(ClientKey.header("X-API-Key"))
                            .build())
                    .build();
            assertThat(requests.warmUp(Duration.ofSeconds(20))).isTrue();
            apps.add(own(JettyApp.start(new TollgateFilter(requests))));
        }
        int threads = 16;
        int requestsPerThread = 25;
        AtomicIntegerArray statuses = new AtomicIntegerArray(600);
        ExecutorService clients = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            done.add(clients.submit(() -> {
                for (int r = 0; r < requestsPerThread; r++) {
                    JettyApp app = apps.get((thread + r) % apps.size());
                    statuses.incrementAndGet(app.get("/api", "X-API-Key", "k-1").statusCode());
                }
            }));
        }
        for (Future<?> future : done) {
            future.get(100, TimeUnit.SECONDS);
        }
        clients.shutdown();

        assertThat(statuses.get(200)).isEqualTo(capacity);
        assertThat(statuses.get(429)).isEqualTo(threads * requestsPerThread - capacity);
        assertThat(apps.stream().mapToInt(JettyApp::served).sum()).isEqualTo(capacity);
    }

    private static void awaitAsyncCalls(CountingLimiter limiter, int calls) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (limiter.asyncCalls() < calls) {
            assertThat(System.nanoTime())
                    .as("the filter asked the limiter %d times of %d within 10 s", limiter.asyncCalls(), calls)
                    .isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    private <T extends AutoCloseable> T own(T resource) {
        resources.add(resource);
        return resource;
    }
}
