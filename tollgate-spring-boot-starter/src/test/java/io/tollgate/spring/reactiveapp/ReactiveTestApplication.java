package io.tollgate.spring.reactiveapp;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.spring.RateLimit;
import io.tollgate.spring.RateLimitExceededException;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * A small reactive (WebFlux) Boot application with rules in application-reactive.yml and annotated
 * controllers that return Mono and Flux; each handler notes the thread it ran on.
 */
@SpringBootApplication
public class ReactiveTestApplication {

    /** The threads the handlers ran on, newest last. */
    public static final Queue<String> HANDLER_THREADS = new ConcurrentLinkedQueue<>();

    /** One permit per request that arrived at {@code /jobs/run}, where it waits for {@link #JOBS_DONE}. */
    public static final Semaphore JOBS_RUNNING = new Semaphore(0);

    /** Completes every request waiting at {@code /jobs/run}. */
    public static final Sinks.Empty<Void> JOBS_DONE = Sinks.empty();

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
        Mono<Map<String, String>> hello() {
            return Mono.fromSupplier(() -> {
                HANDLER_THREADS.add(Thread.currentThread().getName());
                return Map.of("hello", "world");
            });
        }

        /**
         * Limited by the YAML rule on /v1/**, whose cost is the {@code X-Tokens-Used} the answer carries;
         * answers {@code status}, 5xx ones refunded.
         */
        @GetMapping("/v1/completions")
        Mono<ResponseEntity<String>> completions(
                @RequestParam("used") long used, @RequestParam(name = "status", defaultValue = "200") int status) {
            return Mono.fromSupplier(() -> ResponseEntity.status(status)
                    .header("X-Tokens-Used", Long.toString(used))
                    .body("completed"));
        }

        /** Limited to one in flight per client by the YAML rule on /jobs/**: answers once JOBS_DONE completes. */
        @GetMapping("/jobs/run")
        Mono<String> runJob() {
            return Mono.fromRunnable(JOBS_RUNNING::release)
                    .then(JOBS_DONE.asMono())
                    .thenReturn("done");
        }

        /** Answers once the test lets it go ({@link #LET_GO}), at most 10 s later: to hold a request in flight. */
        @GetMapping("/held")
        Mono<String> held() {
            return Mono.fromRunnable(HELD::release)
                    .then(Mono.fromCallable(() -> LET_GO.tryAcquire(10, TimeUnit.SECONDS))
                            .subscribeOn(Schedulers.boundedElastic()))
                    .thenReturn("done");
        }

        /** Limited to one in flight per client by the YAML rule on /jobs/**: fails at once. */
        @GetMapping("/jobs/fail")
        Mono<String> failJob() {
            return Mono.error(new IllegalStateException("the job failed"));
        }

        /** Limited per user by the annotation. */
        @RateLimit(policy = "per-user", key = "#id")
        @GetMapping("/users/{id}/orders")
        Mono<Map<String, String>> orders(@PathVariable("id") String id) {
            return Mono.fromSupplier(() -> {
                HANDLER_THREADS.add(Thread.currentThread().getName());
                return Map.of("user", id);
            });
        }

        /** One user's orders, as docs/spring-boot.md shows them: each user has a limit of their own. */
        @RateLimit(policy = "per-user", key = "#userId")
        @GetMapping("/api/users/{userId}/orders")
        public Mono<List<Map<String, Object>>> ordersOf(@PathVariable String userId) {
            return Mono.just(List.of(Map.of("id", 1, "user", userId)));
        }

        /** One API key's quota, keyed by a header of the request, as docs/spring-boot.md shows. */
        @RateLimit(policy = "per-user", key = "#request.headers.getFirst('X-API-Key')", onMissingKey = "reject:401")
        @GetMapping("/quota")
        public Flux<String> quota() {
            return Flux.just("plenty");
        }

        /** Limited per user by the annotation, a stream of items. */
        @RateLimit(policy = "per-user", key = "'feed:' + #id")
        @GetMapping("/users/{id}/feed")
        Flux<String> feed(@PathVariable("id") String id) {
            return Flux.just("a", "b", "c");
        }

        /** Limited per tenant header and globally, in that order. */
        @RateLimit(policy = "per-user", key = "#request.getHeaders().getFirst('X-Tenant')")
        @RateLimit(policy = "global", key = "'all'")
        @GetMapping("/reports")
        Mono<Map<String, String>> reports() {
            return Mono.just(Map.of("report", "ready"));
        }

        /** Limited per user header; without it the call is rejected with 401. */
        @RateLimit(
                policy = "per-user",
                key = "#exchange.getRequest().getHeaders().getFirst('X-User')",
                onMissingKey = "reject:401")
        @GetMapping("/account")
        Mono<Map<String, String>> account() {
            return Mono.just(Map.of("account", "yours"));
        }

        /** Limited by the client IP, the annotation's default key. */
        @RateLimit(policy = "per-user", cost = 2)
        @GetMapping("/search")
        Mono<Map<String, String>> search() {
            return Mono.just(Map.of("results", "none"));
        }

        /** Limited in code, refusing with the exception as the stream's error. */
        @GetMapping("/exports/{tenant}")
        Mono<Map<String, String>> export(@PathVariable("tenant") String tenant) {
            return Mono.fromCompletionStage(limiter.tryAcquireAsync("export:" + tenant, EXPORTS, 1))
                    .flatMap(decision -> decision.allowed()
                            ? Mono.just(Map.of("export", tenant))
                            : Mono.error(new RateLimitExceededException(EXPORTS, decision)));
        }
    }
}
