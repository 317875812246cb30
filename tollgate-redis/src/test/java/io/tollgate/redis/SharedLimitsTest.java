package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.TimeSource;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/** Several limiter instances sharing one Redis, as several servers behind a load balancer would. */
@Isolated // its bounds on time need the machine to itself
class SharedLimitsTest {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Duration SKEW = Duration.ofMinutes(5);

    @BeforeEach
    void flush() {
        redis.server().command("FLUSHALL");
    }

    @Test
    void instancesWhoseClocksDisagreeByMinutesStillShareOneLimit() {
        Policy policy = Policy.of("skew", Limit.of(10, Rate.perHour(10)));
        try (RedisRateLimiter ahead = instance(skewed(SKEW));
                RedisRateLimiter behind = instance(skewed(SKEW.negated()))) {
            int admitted = 0;
            for (int i = 0; i < 20; i++) {
                RedisRateLimiter instance = i % 2 == 0 ? ahead : behind;
                if (instance.tryAcquire("alice", policy).allowed()) {
                    admitted++;
                }
            }

            assertThat(admitted).isEqualTo(10);
        }
    }

    @Test
    void withTheCallersClockInsteadSkewedInstancesWouldAdmitTooMuch() {
        Policy policy = Policy.of("skew", Limit.of(10, Rate.perHour(10)));
        try (RedisRateLimiter ahead = clientClock(skewed(SKEW));
                RedisRateLimiter behind = clientClock(skewed(SKEW.negated()))) {
            int admitted = 0;
            for (int i = 0; i < 20; i++) {
                RedisRateLimiter instance = i % 2 == 0 ? behind : ahead;
                if (instance.tryAcquire("alice", policy).allowed()) {
                    admitted++;
                }
            }

            assertThat(admitted)
                    .as(
                            "the instance ahead sees ten minutes pass at once: ~1.7 more tokens; why Redis time is the default")
                    .isGreaterThan(10);
        }
    }

    @Test
    void callersWaitingOnDifferentInstancesAreServedInTurn() throws Exception {
        Policy policy = Policy.of("turns", Limit.of(1, Rate.perSecond(20))); // one token per 50 ms
        try (RedisRateLimiter first = instance(TimeSource.system());
                RedisRateLimiter second = instance(TimeSource.system())) {
            first.tryAcquire("shared", policy);
            ExecutorService threads = Executors.newFixedThreadPool(6);
            try {
                long start = System.nanoTime();
                List<Future<Long>> waits = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    RedisRateLimiter instance = i % 2 == 0 ? first : second;
                    waits.add(threads.submit(() -> {
                        assertThat(instance.acquire("shared", policy, 1, Duration.ofSeconds(2)))
                                .isTrue();
                        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    }));
                }
                List<Long> finished = new ArrayList<>();
                for (Future<Long> wait : waits) {
                    finished.add(wait.get(5, TimeUnit.SECONDS));
                }
                finished.sort(null);

                for (int i = 0; i < finished.size(); i++) {
                    assertThat(finished.get(i))
                            .as("caller %d of 6 reserved the token due at %d ms", i + 1, 50 * (i + 1))
                            .isGreaterThanOrEqualTo(50L * (i + 1) - 25);
                }
                assertThat(first.tryAcquire("shared", policy).allowed())
                        .as("all tokens up to now were reserved")
                        .isFalse();
            } finally {
                threads.shutdownNow();
            }
        }
    }

    @Test
    void aCallerThatWouldWaitTooLongIsRefusedAtOnceAndTakesNothing() throws InterruptedException {
        Policy policy = Policy.of("turns", Limit.of(1, Rate.perSecond(1)));
        try (RedisRateLimiter limiter = instance(TimeSource.system())) {
            limiter.tryAcquire("shared", policy);

            long start = System.nanoTime();
            boolean acquired = limiter.acquire("shared", policy, 1, Duration.ofMillis(500));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(acquired).isFalse();
            assertThat(tookMillis).isLessThan(400);
            assertThat(limiter.tryAcquire("shared", policy).retryAfter())
                    .isGreaterThan(Duration.ofMillis(500))
                    .isLessThanOrEqualTo(Duration.ofSeconds(1));
        }
    }

    private RedisRateLimiter instance(TimeSource timeSource) {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .timeSource(timeSource)
                .build();
    }

    private RedisRateLimiter clientClock(TimeSource clock) {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .clientClock(clock)
                .build();
    }

    /** The system clock, moved by {@code skew}: a JVM whose wall clock is wrong. */
    private static TimeSource skewed(Duration skew) {
        return new TimeSource() {
            @Override
            public long nowMicros() {
                return TimeSource.system().nowMicros() + skew.toNanos() / 1_000;
            }

            @Override
            public void sleepMicros(long micros) throws InterruptedException {
                TimeSource.system().sleepMicros(micros);
            }
        };
    }
}
