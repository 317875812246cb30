package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/** One key flooded from three limiter instances after its bucket is empty. */
@Isolated // alone on the machine: its bounds hold for a machine not busy with other tests
class DenyCacheIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Policy POLICY = Policy.of("flood", Limit.of(5, Rate.perSecond(4))); // a token per 250 ms
    private static final int INSTANCES = 3;
    private static final int THREADS_PER_INSTANCE = 4;
    private static final Duration FLOOD = Duration.ofSeconds(3);

    @Test
    void aFloodedKeyCostsRedisAboutOneCallPerRetryIntervalPerInstanceAndRefusesNothingThatCouldPass() throws Exception {
        Flood withCache = flood(RedisRateLimiter.DEFAULT_DENY_CACHE_KEYS);
        Flood withoutCache = flood(0);

        // Per instance and retry interval: one probe, and one more where a probe reaches Redis before the token is
        // due (a refusal is counted from when its request was sent, so it ends early by the time the request took
        // to reach Redis); plus, at the start, every thread of every instance before the first refusal is known.
        long intervals = FLOOD.toMillis() / 250 + 1;
        long budget = INSTANCES * (2 * intervals + THREADS_PER_INSTANCE);
        System.out.printf(
                "flood of %d requests: %d Redis calls with the deny cache, %d without; admitted %d and %d (%d to %d tokens"
                        + " were due)%n",
                withCache.requests,
                withCache.redisCalls,
                withoutCache.redisCalls,
                withCache.admitted,
                withoutCache.admitted,
                withCache.surelyDue(),
                withCache.due());
        assertThat(withCache.redisCalls).isLessThanOrEqualTo(budget);
        assertThat(withoutCache.redisCalls).isGreaterThan(100 * withCache.redisCalls);
        assertThat(withCache.admitted)
                .as("every token that came due was taken, as without the cache")
                .isBetween(withCache.surelyDue() - INSTANCES, withCache.due());
    }

    @Test
    void theAdmissionThatTakesTheLastTokensTellsTheNextRequestsTheirRefusalWithoutAskingRedis() {
        redis.server().command("FLUSHALL");
        Policy twoPerHour = Policy.of("two-per-hour", Limit.of(2, Rate.perHour(2)));
        try (RedisRateLimiter limiter =
                RedisRateLimiter.builder().uri(redis.server().uri()).build()) {
            long callsBefore = redisCalls();
            assertThat(limiter.tryAcquire("client", twoPerHour).allowed()).isTrue();
            assertThat(limiter.tryAcquire("client", twoPerHour).allowed()).isTrue();

            Decision next = limiter.tryAcquire("client", twoPerHour);
            for (int i = 0; i < 50; i++) {
                assertThat(limiter.tryAcquire("client", twoPerHour).allowed()).isFalse();
            }

            assertThat(next.allowed()).isFalse();
            assertThat(next.retryAfter()).isBetween(Duration.ofMinutes(29), Duration.ofMinutes(30));
            assertThat(redisCalls() - callsBefore)
                    .as("the two admissions only: the second left no token, which the refusals were told from")
                    .isEqualTo(2);
            assertThat(limiter.tryAcquire("client", twoPerHour, 2).allowed())
                    .as("another cost is asked of Redis")
                    .isFalse();
            assertThat(redisCalls() - callsBefore).isEqualTo(3);
        }
    }

    /**
     * A flood's counts, and two spans of Redis's clock: the longest the bucket could have refilled for (from before
     * it was emptied until every request had its answer) and the shortest that the flood surely asked throughout
     * (from after it was emptied until the flood was told to stop). A stall of this JVM between two readings
     * widens the one and narrows the other, never the bounds they give.
     */
    private record Flood(long requests, long redisCalls, long admitted, long longestMicros, long shortestMicros) {

        /** The most tokens that can have come due. */
        long due() {
            return longestMicros * 4 / 1_000_000;
        }

        /** The tokens that came due while every thread was still asking. */
        long surelyDue() {
            return shortestMicros * 4 / 1_000_000;
        }
    }

    private Flood flood(long denyCacheKeys) throws Exception {
        redis.server().command("FLUSHALL");
        List<RedisRateLimiter> instances = new ArrayList<>();
        for (int i = 0; i < INSTANCES; i++) {
            instances.add(RedisRateLimiter.builder()
                    .uri(redis.server().uri())
                    .timeout(Duration.ofSeconds(5))
                    .denyCache(denyCacheKeys)
                    .build());
        }
        ExecutorService pool = Executors.newFixedThreadPool(INSTANCES * THREADS_PER_INSTANCE);
        try {
            long beforeEmpty = redis.server().timeMicros();
            instances.get(0).tryAcquire("attacker", POLICY, 5); // empty the bucket
            long afterEmpty = redis.server().timeMicros();
            long callsBefore = redisCalls();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong requests = new AtomicLong();
            AtomicLong admitted = new AtomicLong();
            List<Future<?>> workers = new ArrayList<>();
            for (RedisRateLimiter instance : instances) {
                for (int t = 0; t < THREADS_PER_INSTANCE; t++) {
                    workers.add(pool.submit(() -> {
                        while (!stop.get()) {
                            requests.incrementAndGet();
                            if (instance.tryAcquire("attacker", POLICY).allowed()) {
                                admitted.incrementAndGet();
                            }
                        }
                    }));
                }
            }
            TimeUnit.NANOSECONDS.sleep(FLOOD.toNanos());
            long stopping = redis.server().timeMicros();
            stop.set(true);
            for (Future<?> worker : workers) {
                worker.get(10, TimeUnit.SECONDS);
            }
            long end = redis.server().timeMicros();
            return new Flood(
                    requests.get(),
                    redisCalls() - callsBefore,
                    admitted.get(),
                    end - beforeEmpty,
                    stopping - afterEmpty);
        } finally {
            pool.shutdownNow();
            instances.forEach(RedisRateLimiter::close);
        }
    }

    private long redisCalls() {
        return redis.server().commandCalls("evalsha") + redis.server().commandCalls("eval");
    }
}
