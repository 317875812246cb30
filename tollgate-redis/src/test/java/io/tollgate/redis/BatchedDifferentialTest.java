package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.BucketGenerators;
import io.tollgate.BucketGenerators.Step;
import io.tollgate.Decision;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.ManualTimeSource;
import io.tollgate.Policy;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * A batching limiter against one that is not, and against the in-memory limiter, with one clock: requests
 * are sent in bursts without waiting, so that they travel together in batches, over three keys and two
 * policies at once; every decision of every burst is the same in all three, field for field. And the two
 * scripts share buckets: instances with and without batching, taking turns on the same keys, decide as
 * one in-memory limiter.
 */
class BatchedDifferentialTest {

    private static final Duration PATIENT = Duration.ofSeconds(5);
    private static final AtomicLong RUNS = new AtomicLong();
    private static RedisServer server;

    @BeforeContainer
    static void start() {
        server = RedisServer.start();
    }

    @AfterContainer
    static void stop() {
        server.close();
    }

    @Property(tries = 150)
    void batchedUnbatchedAndInMemoryGiveIdenticalDecisions(
            @ForAll("policies") Policy first, @ForAll("policies") Policy second, @ForAll("steps") List<Step> steps) {
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
        InMemoryRateLimiter memory =
                InMemoryRateLimiter.builder().timeSource(time).build();
        String run = "run-" + RUNS.incrementAndGet() + "-";

        try (RedisRateLimiter batched = limiter(time, "batched:", true);
                RedisRateLimiter unbatched = limiter(time, "unbatched:", false)) {
            List<CompletableFuture<Decision>> burst = new ArrayList<>();
            List<Decision> expected = new ArrayList<>();
            for (int i = 0; i < steps.size(); i++) {
                Step step = steps.get(i);
                if (step.advanceMicros() > 0) {
                    assertBurst(burst, expected);
                    time.advanceMicros(step.advanceMicros()); // only between bursts: a batch reads the clock once
                }
                Policy policy = step.pick(first, second);
                long cost = step.cost(policy);
                String key = run + (step.choice() % 3);
                Decision alone = unbatched.tryAcquire(key, policy, cost);
                expected.add(memory.tryAcquire(key, policy, cost));
                assertThat(alone).isEqualTo(expected.get(expected.size() - 1));
                burst.add(batched.tryAcquireAsync(key, policy, cost).toCompletableFuture());
            }
            assertBurst(burst, expected);
        }
    }

    @Property(tries = 50)
    void batchingAndUnbatchedInstancesShareTheSameBuckets(
            @ForAll("policies") Policy first, @ForAll("policies") Policy second, @ForAll("steps") List<Step> steps) {
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
        InMemoryRateLimiter memory =
                InMemoryRateLimiter.builder().timeSource(time).build();
        String run = "run-" + RUNS.incrementAndGet() + "-";

        try (RedisRateLimiter batched = limiter(time, "shared:", true);
                RedisRateLimiter unbatched = limiter(time, "shared:", false)) {
            for (int i = 0; i < steps.size(); i++) {
                Step step = steps.get(i);
                time.advanceMicros(step.advanceMicros());
                Policy policy = step.pick(first, second);
                long cost = step.cost(policy);
                String key = run + (step.choice() % 3);
                RedisRateLimiter instance = i % 2 == 0 ? batched : unbatched;

                assertThat(instance.tryAcquire(key, policy, cost))
                        .as("request %d, %s", i, instance)
                        .isEqualTo(memory.tryAcquire(key, policy, cost));
            }
        }
    }

    private static void assertBurst(List<CompletableFuture<Decision>> burst, List<Decision> expected) {
        for (int i = 0; i < burst.size(); i++) {
            assertThat(burst.get(i).join()).as("request %d of the burst", i).isEqualTo(expected.get(i));
        }
        burst.clear();
        expected.clear();
    }

    @Provide
    Arbitrary<Policy> policies() {
        return BucketGenerators.policies("p");
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        return BucketGenerators.steps();
    }

    private static RedisRateLimiter limiter(ManualTimeSource time, String prefix, boolean batching) {
        return RedisRateLimiter.builder()
                .uri(server.uri())
                .timeout(PATIENT)
                .clientClock(time)
                .keyPrefix(prefix)
                .batching(batching)
                .denyCache(0)
                .build();
    }
}
