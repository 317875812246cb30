package io.tollgate.benchmarks;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.MicrometerMetrics;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How soon a limiter at its default settings decides on Redis again after Redis was frozen under load: the
 * library's asynchronous API keeps a number of requests in flight on many keys; Redis is stopped (SIGSTOP) for
 * three seconds, then continued while the load goes on. Prints, per point, the seconds from SIGCONT to the
 * first decision Redis made in time, the share of the last second's decisions that Redis made, and how many
 * keys' fallback admissions were charged to Redis afterwards.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.StallRecovery}. It
 * starts its own redis-server. Points: 64 and 256 in flight, on 10 000 and 100 000 keys.
 */
public final class StallRecovery {

    private static final Policy POLICY = Policy.of("stall", Limit.of(1_000_000, Rate.perSecond(1)));

    private StallRecovery() {}

    public static void main(String[] args) throws Exception {
        System.out.println("| in flight | keys | decisions | back on Redis after SIGCONT | last second from Redis |"
                + " keys the fallback admitted while Redis was down | their charges that reached Redis | dropped |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
        for (int keys : new int[] {10_000, 100_000}) {
            for (int inFlight : new int[] {64, 256}) {
                try (RedisServer redis = RedisServer.start()) {
                    point(redis, inFlight, keys);
                }
            }
        }
    }

    private static void point(RedisServer redis, int inFlight, int keys) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.uri())
                .metrics(MicrometerMetrics.of(registry))
                .build();
        limiter.warmUp(Duration.ofSeconds(5));
        Semaphore slots = new Semaphore(inFlight);
        SplittableRandom random = new SplittableRandom(7);
        AtomicLong decisions = new AtomicLong();
        AtomicLong firstFromRedisAfter = new AtomicLong(Long.MAX_VALUE);
        AtomicLong lastSecond = new AtomicLong();
        AtomicLong lastSecondFromRedis = new AtomicLong();
        long start = System.nanoTime();
        long pauseAt = start + TimeUnit.SECONDS.toNanos(3);
        long resumeTarget = pauseAt + TimeUnit.SECONDS.toNanos(3);
        long stopAt = resumeTarget + TimeUnit.SECONDS.toNanos(5);
        long lastSecondFrom = stopAt - TimeUnit.SECONDS.toNanos(1);
        AtomicLong resumedAt = new AtomicLong(Long.MAX_VALUE);
        Set<String> admittedWithoutRedis = ConcurrentHashMap.newKeySet();
        boolean paused = false;
        while (System.nanoTime() < stopAt) {
            long now = System.nanoTime();
            if (!paused && now >= pauseAt) {
                redis.pause();
                paused = true;
            } else if (paused && resumedAt.get() == Long.MAX_VALUE && now >= resumeTarget) {
                redis.resume();
                resumedAt.set(System.nanoTime());
            }
            if (!slots.tryAcquire(10, TimeUnit.MILLISECONDS)) {
                continue;
            }
            String key = "k" + random.nextInt(keys);
            limiter.tryAcquireAsync(key, POLICY, 1).whenComplete((decision, failure) -> {
                long answered = System.nanoTime();
                boolean fromRedis = failure == null && !decision.degraded();
                decisions.incrementAndGet();
                if (failure == null && decision.allowed() && decision.degraded()) {
                    admittedWithoutRedis.add(key); // LOCAL admits only once Redis is down: charged later
                }
                if (fromRedis && answered > resumedAt.get()) {
                    firstFromRedisAfter.accumulateAndGet(answered, Math::min);
                }
                if (answered > lastSecondFrom) {
                    lastSecond.incrementAndGet();
                    if (fromRedis) {
                        lastSecondFromRedis.incrementAndGet();
                    }
                }
                slots.release();
            });
        }
        slots.acquire(inFlight);
        Thread.sleep(2_000); // the charges of what the fallback admitted land meanwhile
        double charged = unseen(registry, "charged");
        double dropped = unseen(registry, "dropped");
        System.out.printf(
                "| %d | %,d | %,d | %.2f s | %.1f %% | %,d | %,.0f | %,.0f |%n",
                inFlight,
                keys,
                decisions.get(),
                (firstFromRedisAfter.get() - resumedAt.get()) / 1e9,
                100.0 * lastSecondFromRedis.get() / Math.max(1, lastSecond.get()),
                admittedWithoutRedis.size(),
                charged,
                dropped);
        limiter.close();
    }

    private static double unseen(SimpleMeterRegistry registry, String outcome) {
        return registry.find("tollgate.fallback.unseen").tag("outcome", outcome).counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }
}
