package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.TestDepth;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Slow is not down: while Redis answers, late or not, limiters at their default settings never admit more than
 * the bucket allows, however busy the machine. Each round builds three fresh limiters (their own connections,
 * cold decision paths), starts 32 threads on each against one key from the first moment, and keeps both cores
 * busy with spinning threads, so that answers come after the 50 ms budget as they do on a loaded host.
 */
@Timeout(180)
@Isolated // alone on the machine: its bounds hold for a machine not busy with other tests
class SlowIsNotDownIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** 100 tokens, refilled 100 a minute: at most 100 plus one token every 600 ms. */
    private static final Policy HUNDRED_PER_MINUTE = Policy.of("exact", Limit.of(100, Rate.perMinute(100)));

    /** Four rounds in the usual build, twenty in the deep run ({@code -Pdeep}). */
    private static final int ROUNDS = TestDepth.runs(4, 20);

    private static final int INSTANCES = 3;
    private static final int THREADS_EACH = 32;
    private static final long ROUND_MILLIS = 2_000;

    @Test
    void threeFreshLimitersOnOneKeyOfABusyMachineNeverAdmitMoreThanTheBucket() throws Exception {
        List<String> rounds = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            String key = "round-" + round;
            List<RedisRateLimiter> limiters = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                limiters.add(
                        RedisRateLimiter.builder().uri(redis.server().uri()).build()); // the defaults
            }
            AtomicLong admitted = new AtomicLong();
            AtomicLong degraded = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int b = 0; b < 2; b++) {
                threads.add(started(() -> busy(stop)));
            }
            for (RedisRateLimiter limiter : limiters) {
                for (int t = 0; t < THREADS_EACH; t++) {
                    threads.add(started(() -> {
                        await(go);
                        while (!stop.get()) {
                            Decision decision = limiter.tryAcquire(key, HUNDRED_PER_MINUTE);
                            if (decision.allowed()) {
                                admitted.incrementAndGet();
                            }
                            if (decision.degraded()) {
                                degraded.incrementAndGet();
                            }
                        }
                    }));
                }
            }
            long start = System.nanoTime();
            go.countDown();
            Thread.sleep(ROUND_MILLIS);
            stop.set(true);
            for (Thread thread : threads) {
                thread.join();
            }
            long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
            limiters.forEach(RedisRateLimiter::close);

            long most = 100 + elapsedMillis / 600 + 1;
            rounds.add("round " + round + ": " + admitted.get() + " admitted of at most " + most + ", " + degraded.get()
                    + " degraded");
            assertThat(admitted.get()).as(String.join("\n", rounds)).isLessThanOrEqualTo(most);
        }
        System.out.println(String.join("\n", rounds));
    }

    private static Thread started(Runnable work) {
        Thread thread = new Thread(work);
        thread.start();
        return thread;
    }

    private static void busy(AtomicBoolean stop) {
        long spin = 0;
        while (!stop.get()) {
            spin += Long.numberOfTrailingZeros(spin + System.nanoTime());
        }
        if (spin == 42) {
            System.out.print(""); // keeps the loop from being optimised away
        }
    }

    private static void await(CountDownLatch go) {
        try {
            go.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
