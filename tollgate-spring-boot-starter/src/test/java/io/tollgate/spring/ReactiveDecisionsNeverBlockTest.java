package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.spring.reactiveapp.ReactiveTestApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive application on a limiter that answers late, from a thread of its own, as Redis does, and
 * that fails the test if anything asks it for a decision by blocking on an event loop: the web filter and
 * {@code @RateLimit} wait without blocking, and the handlers run on the server's event loops, never on the
 * store's thread. A limiter that fails answers 500 with a problem.
 */
@SpringBootTest(
        classes = {ReactiveTestApplication.class, ReactiveDecisionsNeverBlockTest.SlowStore.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "tollgate.redis.use-application-redis=false")
@ActiveProfiles("reactive")
@DirtiesContext
class ReactiveDecisionsNeverBlockTest {

    /** The names of Reactor Netty's server event loops, as Spring Boot or Reactor Netty name them. */
    private static final String SERVER_LOOP = "(webflux|reactor)-http-[a-z]+-\\d+";

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    LateLimiter limiter;

    @BeforeEach
    void forgetEarlierCalls() {
        limiter.blockingCallsOnEventLoops.clear();
        ReactiveTestApplication.HANDLER_THREADS.clear();
    }

    @Test
    void theFilterWaitsForALateDecisionWithoutBlockingAndTheHandlerRunsOnTheServersLoop() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            statuses.add(get("/api/hello", "X-Forwarded-For", "203.0.113.50").statusCode());
        }

        assertThat(statuses).containsExactly(200, 200, 200, 429);
        assertThat(limiter.lateAnswers).isGreaterThanOrEqualTo(4);
        assertThat(limiter.blockingCallsOnEventLoops).isEmpty();
        assertThat(ReactiveTestApplication.HANDLER_THREADS)
                .hasSize(3)
                .allSatisfy(thread -> assertThat(thread).matches(SERVER_LOOP));
    }

    @Test
    void theAnnotationWaitsForALateDecisionWithoutBlocking() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            statuses.add(get("/users/grace/orders").statusCode());
        }

        assertThat(statuses).containsExactly(200, 200, 429);
        assertThat(limiter.blockingCallsOnEventLoops).isEmpty();
        assertThat(ReactiveTestApplication.HANDLER_THREADS)
                .hasSize(2)
                .allSatisfy(thread -> assertThat(thread).matches(SERVER_LOOP));
    }

    @Test
    void aFailingLimiterIsAnswered500WithAProblemNotAStackTrace() throws Exception {
        HttpResponse<String> failed = get("/api/hello", "X-Forwarded-For", LateLimiter.FAILING_IP);

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(failed.body()).contains("\"status\":500").doesNotContain("Exception", "at io.");
        assertThat(ReactiveTestApplication.HANDLER_THREADS).isEmpty();
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The application's own limiter, the late one: the starter's backs off. */
    @TestConfiguration(proxyBeanMethods = false)
    static class SlowStore {
        @Bean
        LateLimiter lateLimiter() {
            return new LateLimiter();
        }
    }

    /**
     * An in-memory limiter whose asynchronous answers come 20 ms late from a thread named slow-store, and
     * which notes every blocking call made on a non-blocking thread. The client IP {@link #FAILING_IP} makes
     * it fail.
     */
    static final class LateLimiter implements RateLimiter {
        static final String FAILING_IP = "192.0.2.99";

        final Queue<String> blockingCallsOnEventLoops = new ConcurrentLinkedQueue<>();
        volatile int lateAnswers;
        private final RateLimiter memory = InMemoryRateLimiter.create();
        private final ScheduledExecutorService store =
                Executors.newSingleThreadScheduledExecutor(task -> new Thread(task, "slow-store"));

        @Override
        public Decision tryAcquire(String key, Policy policy, long cost) {
            noteIfOnEventLoop("tryAcquire " + key);
            return memory.tryAcquire(key, policy, cost);
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
            CompletableFuture<Decision> answer = new CompletableFuture<>();
            store.schedule(
                    () -> {
                        lateAnswers++;
                        if (key.endsWith(FAILING_IP)) {
                            answer.completeExceptionally(new IllegalStateException("a bug in a custom limiter"));
                        } else {
                            answer.complete(memory.tryAcquire(key, policy, cost));
                        }
                    },
                    20,
                    TimeUnit.MILLISECONDS);
            return answer;
        }

        @Override
        public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
            noteIfOnEventLoop("acquire " + key);
            return memory.acquire(key, policy, cost, maxWait);
        }

        private void noteIfOnEventLoop(String call) {
            Thread thread = Thread.currentThread();
            if (Schedulers.isInNonBlockingThread() || thread.getName().matches(SERVER_LOOP)) {
                blockingCallsOnEventLoops.add(call + " on " + thread.getName());
            }
        }
    }
}
