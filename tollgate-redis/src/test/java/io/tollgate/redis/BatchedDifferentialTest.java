package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Policy;
import io.tollgate.fixtures.BucketGenerators;
import io.tollgate.fixtures.BucketGenerators.Step;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.fixtures.Seeds;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A batching limiter against one that is not, and against the in-memory limiter, with one clock: requests
 * are sent in bursts without waiting, so that they travel together in batches, over three keys and two
 * policies at once; every decision of every burst is the same in all three, field for field. And the two
 * scripts share buckets: instances with and without batching, taking turns on the same keys, decide as
 * one in-memory limiter. On a Redis Cluster of one master, a batch holds keys of several slots, which the
 * script reads one by one instead of with one MGET: its decisions are the in-memory limiter's too.
 */
class BatchedDifferentialTest {

    private static final Duration PATIENT = Duration.ofSeconds(5);
    private static final AtomicLong RUNS = new AtomicLong();
    private static RedisServer server;
    private static RedisCluster cluster;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        cluster = RedisCluster.start(1);
    }

    @AfterAll
    static void stop() {
        server.close();
        cluster.close();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("traces")
    void batchedUnbatchedAndInMemoryGiveIdenticalDecisions(long seed) {
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);

        try (RedisRateLimiter batched = limiter(time, "batched:", true);
                RedisRateLimiter unbatched = limiter(time, "unbatched:", false)) {
            replayInBursts(seed, time, batched, unbatched);
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("cases")
    void batchingAndUnbatchedInstancesShareTheSameBuckets(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy first = generate.policy("p");
        Policy second = generate.policy("p");
        List<Step> steps = generate.steps();
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

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("cases")
    void batchesOfSeveralSlotsOfOneClusterMasterDecideAsTheInMemoryLimiter(long seed) {
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);

        try (RedisRateLimiter batched = Connections.connected(RedisRateLimiter.builder()
                .clusterUris(cluster.uris())
                .timeout(PATIENT)
                .clientClock(time)
                .batching(true)
                .denyCache(0)
                .build())) {
            replayInBursts(seed, time, batched, null);
        }
    }

    /**
     * Replays the seed's bursts over three keys and two policies: each request is decided at once by the
     * in-memory limiter (and by {@code unbatched}, if given, which must agree), and sent with the rest of its
     * burst to {@code batched}, whose decisions must be the same.
     */
    private static void replayInBursts(
            long seed, ManualTimeSource time, RedisRateLimiter batched, RedisRateLimiter unbatched) {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy first = generate.policy("p");
        Policy second = generate.policy("p");
        List<Step> steps = generate.bursts();
        InMemoryRateLimiter memory =
                InMemoryRateLimiter.builder().timeSource(time).build();
        String run = "run-" + RUNS.incrementAndGet() + "-";
        List<Request> burst = new ArrayList<>();
        for (Step step : steps) {
            if (step.advanceMicros() > 0) {
                assertBurst(batched, burst);
                time.advanceMicros(step.advanceMicros()); // only between bursts: a batch reads the clock once
            }
            Policy policy = step.pick(first, second);
            long cost = step.cost(policy);
            String key = run + (step.choice() % 3);
            Decision expected = memory.tryAcquire(key, policy, cost);
            if (unbatched != null) {
                assertThat(unbatched.tryAcquire(key, policy, cost)).isEqualTo(expected);
            }
            burst.add(new Request(key, policy, cost, expected));
        }
        assertBurst(batched, burst);
    }

    private record Request(String key, Policy policy, long cost, Decision expected) {}

    /**
     * Sends a burst's requests back to back, so that all but the first ones pile up behind them and travel
     * together (runs of one key included), then checks every decision.
     */
    private static void assertBurst(RedisRateLimiter batched, List<Request> burst) {
        List<CompletableFuture<Decision>> sent = new ArrayList<>();
        for (Request request : burst) {
            sent.add(batched.tryAcquireAsync(request.key(), request.policy(), request.cost())
                    .toCompletableFuture());
        }
        for (int i = 0; i < burst.size(); i++) {
            assertThat(sent.get(i).join())
                    .as("request %d of the burst", i)
                    .isEqualTo(burst.get(i).expected());
        }
        burst.clear();
    }

    static LongStream traces() {
        return Seeds.of(50, 500);
    }

    static LongStream cases() {
        return Seeds.of(15, 150);
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
