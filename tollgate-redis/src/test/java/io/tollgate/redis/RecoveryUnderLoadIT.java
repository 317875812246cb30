package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Back on Redis after a stall, under the load of a busy service: 64 asynchronous requests always in flight on
 * 10 000 keys; Redis frozen (SIGSTOP) for three seconds and continued while the load goes on. Redis must decide
 * again within seconds and keep deciding, and every request admitted anywhere must be charged in Redis exactly
 * once: what the fallback admitted while the circuit was open is charged once Redis answers, what it refused
 * while Redis was late and Redis allowed is given back.
 */
@Isolated // it makes a load of its own and bounds the recovery: it needs the machine to itself
@Timeout(120)
class RecoveryUnderLoadIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final int KEYS = 10_000;
    private static final int IN_FLIGHT = 64;
    private static final long TICKS_PER_TOKEN = Duration.ofDays(1).toNanos() / 1_000;

    /** Room for every request of the test: a key is never refused, so every admission is one token owed. */
    private static final Policy GENEROUS = Policy.of("recovery", Limit.of(1_000, Rate.of(1, Duration.ofDays(1))));

    @Test
    void redisDecidesAgainSoonAfterAStallUnderLoadAndEveryAdmissionIsChargedOnce() throws Exception {
        redis.server().command("FLUSHALL");
        RedisRateLimiter limiter =
                RedisRateLimiter.builder().uri(redis.server().uri()).build(); // the defaults
        AtomicIntegerArray admitted = new AtomicIntegerArray(KEYS);
        AtomicLong lastFromRedis = new AtomicLong();
        List<long[]> completions = new ArrayList<>(); // {nanos, fromRedis}
        Semaphore slots = new Semaphore(IN_FLIGHT);
        SplittableRandom random = new SplittableRandom(37);

        long start = System.nanoTime();
        long pauseAt = start + TimeUnit.SECONDS.toNanos(2);
        long resumeAt = pauseAt + TimeUnit.SECONDS.toNanos(3);
        long stopAt = resumeAt + TimeUnit.SECONDS.toNanos(5);
        boolean paused = false;
        boolean resumed = false;
        while (System.nanoTime() < stopAt) {
            long now = System.nanoTime();
            if (!paused && now >= pauseAt) {
                redis.server().pause();
                paused = true;
            } else if (paused && !resumed && now >= resumeAt) {
                redis.server().resume();
                resumed = true;
                resumeAt = System.nanoTime();
            }
            if (!slots.tryAcquire(10, TimeUnit.MILLISECONDS)) {
                continue;
            }
            int key = random.nextInt(KEYS);
            limiter.tryAcquireAsync("k" + key, GENEROUS, 1).whenComplete((decision, failure) -> {
                long answered = System.nanoTime();
                if (failure == null && decision.allowed()) {
                    admitted.incrementAndGet(key);
                }
                boolean fromRedis = failure == null && !decision.degraded();
                if (fromRedis) {
                    lastFromRedis.accumulateAndGet(answered, Math::max);
                }
                synchronized (completions) {
                    completions.add(new long[] {answered, fromRedis ? 1 : 0});
                }
                slots.release();
            });
        }
        slots.acquire(IN_FLIGHT); // every request answered

        long firstFromRedisAfterResume = Long.MAX_VALUE;
        long lastSecond = 0;
        long lastSecondFromRedis = 0;
        synchronized (completions) {
            for (long[] completion : completions) {
                if (completion[1] == 1 && completion[0] > resumeAt) {
                    firstFromRedisAfterResume = Math.min(firstFromRedisAfterResume, completion[0]);
                }
                if (completion[0] > stopAt - TimeUnit.SECONDS.toNanos(1)) {
                    lastSecond++;
                    lastSecondFromRedis += completion[1];
                }
            }
        }
        double backAfterSeconds = (firstFromRedisAfterResume - resumeAt) / 1e9;
        System.out.printf(
                "stall under load: %d decisions, back on Redis %.2f s after SIGCONT, last second %d of %d from Redis,"
                        + " %d keys' charges sent to Redis%n",
                completions.size(),
                backAfterSeconds,
                lastSecondFromRedis,
                lastSecond,
                limiter.guard().unseenCharged());
        assertThat(backAfterSeconds)
                .as("Redis decides again within seconds of SIGCONT")
                .isLessThan(3);
        assertThat(lastSecondFromRedis)
                .as("and keeps deciding while the load goes on")
                .isGreaterThan(lastSecond * 9 / 10);
        assertThat(limiter.guard().unseenCharged())
                .as("the fallback admitted requests while the circuit was open")
                .isPositive();
        awaitEveryAdmissionOwed(admitted, limiter);
        limiter.close();
    }

    /** Waits until, for every key, Redis holds exactly one token owed for each request admitted. */
    private static void awaitEveryAdmissionOwed(AtomicIntegerArray admitted, RedisRateLimiter limiter)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        List<String> differences = List.of();
        while (System.nanoTime() < deadline) {
            differences = differences(admitted);
            if (differences.isEmpty() && limiter.guard().unseenWaiting() == 0) {
                return;
            }
            Thread.sleep(200);
        }
        assertThat(differences)
                .as("keys whose admissions Redis does not owe exactly")
                .isEmpty();
    }

    @SuppressWarnings("unchecked")
    private static List<String> differences(AtomicIntegerArray admitted) {
        String[] mget = new String[KEYS + 1];
        mget[0] = "MGET";
        for (int key = 0; key < KEYS; key++) {
            mget[key + 1] = "tollgate:recovery:k" + key;
        }
        List<Object> stored = (List<Object>) redis.server().command(mget);
        long now = redis.server().timeMicros();
        List<String> differences = new ArrayList<>();
        for (int key = 0; key < KEYS; key++) {
            long owed = 0;
            if (stored.get(key) != null) {
                String[] parts = ((String) stored.get(key)).split("\\|");
                long debt = Long.parseLong(parts[parts.length - 1]) - (now - Long.parseLong(parts[0]));
                owed = (debt + TICKS_PER_TOKEN - 1) / TICKS_PER_TOKEN; // a tick per microsecond
            }
            if (owed != admitted.get(key)) {
                differences.add("k" + key + ": admitted " + admitted.get(key) + ", Redis owed " + owed);
            }
        }
        return differences.size() > 20 ? differences.subList(0, 20) : differences;
    }
}
