package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.TimeSource;
import io.tollgate.fixtures.Eventually;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Several limiter instances sharing one Redis, as several servers behind a load balancer would. */
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

    /**
     * On a clock the test moves (Redis decides on it too), so that each caller's turn is a time on that clock and
     * not a hope about how fast a machine runs six threads.
     */
    @Test
    void callersWaitingOnDifferentInstancesAreServedInTurn() throws Exception {
        Policy policy = Policy.of("turns", Limit.of(1, Rate.perSecond(20))); // one token per 50 ms
        ManualTimeSource clock = new ManualTimeSource(1_700_000_000_000_000L);
        try (RedisRateLimiter first = clientClock(clock);
                RedisRateLimiter second = clientClock(clock)) {
            first.tryAcquire("shared", policy);
            ExecutorService threads = Executors.newFixedThreadPool(6);
            try {
                AtomicInteger served = new AtomicInteger();
                List<Future<?>> waits = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    RedisRateLimiter instance = i % 2 == 0 ? first : second;
                    waits.add(threads.submit(() -> {
                        assertThat(instance.acquire("shared", policy, 1, Duration.ofSeconds(2)))
                                .isTrue();
                        served.incrementAndGet();
                        return null;
                    }));
                }
                assertThat(clock.awaitSleepers(6, Duration.ofSeconds(30)))
                        .as("six callers reserved a token and wait for it")
                        .isTrue();
                assertThat(first.tryAcquire("shared", policy).allowed())
                        .as("all tokens up to now were reserved")
                        .isFalse();

                for (int turn = 1; turn <= 6; turn++) {
                    clock.advance(Duration.ofMillis(50));
                    int expected = turn;
                    Eventually.noProblem(
                            () -> served.get() >= expected ? Optional.empty() : Optional.of(served.get() + " served"),
                            Duration.ofSeconds(30),
                            "caller " + turn + " served");
                    assertThat(served.get())
                            .as("callers served once %d tokens are due", turn)
                            .isEqualTo(turn);
                }
                for (Future<?> wait : waits) {
                    wait.get(30, TimeUnit.SECONDS);
                }
            } finally {
                threads.shutdownNow();
            }
        }
    }

    /** On a clock that moves only when told: a caller that waited for its token would never come back. */
    @Test
    void aCallerThatWouldWaitTooLongIsRefusedAtOnceAndTakesNothing() {
        Policy policy = Policy.of("turns", Limit.of(1, Rate.perSecond(1)));
        ManualTimeSource clock = new ManualTimeSource(1_700_000_000_000_000L);
        try (RedisRateLimiter limiter = clientClock(clock)) {
            limiter.tryAcquire("shared", policy);

            boolean acquired = assertTimeoutPreemptively(
                    Duration.ofSeconds(30), () -> limiter.acquire("shared", policy, 1, Duration.ofMillis(500)));

            assertThat(acquired).isFalse();
            assertThat(limiter.tryAcquire("shared", policy).retryAfter())
                    .as("nothing was reserved for the refused caller")
                    .isEqualTo(Duration.ofSeconds(1));
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
