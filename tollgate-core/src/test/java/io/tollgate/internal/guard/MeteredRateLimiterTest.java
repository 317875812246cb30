package io.tollgate.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The guard of the in-memory limiter: it reports every decision and reservation, and changes none. */
class MeteredRateLimiterTest {

    private static final Policy TWO = Policy.of("two", Limit.of(2, Rate.perMinute(1)));

    private final List<String> recorded = new CopyOnWriteArrayList<>();
    private final MetricsRecorder recorder = new MetricsRecorder() {
        @Override
        public void decided(Policy policy, boolean allowed, String source) {
            recorded.add(policy.name() + " " + (allowed ? "allowed" : "refused") + " " + source);
        }
    };
    private final InMemoryRateLimiter memory = InMemoryRateLimiter.builder()
            .timeSource(new ManualTimeSource(1_000_000))
            .build();
    private final MeteredRateLimiter limiter = new MeteredRateLimiter(memory, recorder, "memory");

    @Test
    void passesOnEveryMethodThatALimiterMayOverride() throws NoSuchMethodException {
        // the defaults that refuse (UnsupportedOperationException) unless the limiter overrides them; the
        // others (tryAcquire without a cost, charge, tryAcquirePermit, warmUp) are built on these
        for (java.lang.reflect.Method method : RateLimiter.class.getMethods()) {
            if (method.isDefault()
                    && List.of("refundAsync", "chargeAsync", "inspect", "reset", "tryAcquirePermitAsync", "inFlight")
                            .contains(method.getName())) {
                assertThat(MeteredRateLimiter.class
                                .getMethod(method.getName(), method.getParameterTypes())
                                .getDeclaringClass())
                        .as("%s, passed on by the decorators' base", method)
                        .isEqualTo(ForwardingRateLimiter.class);
            }
        }
        try (Permit permit = limiter.tryAcquirePermit("alice", ConcurrencyLimit.of("one", 1))) {
            assertThat(permit.acquired()).isTrue();
            assertThat(limiter.inFlight("alice", ConcurrencyLimit.of("one", 1))).isEqualTo(1);
        }
    }

    @Test
    void reportsEachDecisionWithItsOutcomeAndSource() {
        limiter.tryAcquire("alice", TWO);
        limiter.tryAcquire("alice", TWO);
        limiter.tryAcquire("alice", TWO);

        assertThat(recorded).containsExactly("two allowed memory", "two allowed memory", "two refused memory");
    }

    @Test
    void reportsAsynchronousDecisionsWhenTheyComplete() {
        limiter.tryAcquireAsync("alice", TWO, 2).toCompletableFuture().join();
        limiter.tryAcquireAsync("alice", TWO, 1).toCompletableFuture().join();

        assertThat(recorded).containsExactly("two allowed memory", "two refused memory");
    }

    @Test
    void reportsReservationsGrantedAndRefused() throws InterruptedException {
        boolean granted = limiter.acquire("alice", TWO, 2, Duration.ZERO);
        boolean refused = limiter.acquire("alice", TWO, 1, Duration.ZERO);

        assertThat(granted).isTrue();
        assertThat(refused).isFalse();
        assertThat(recorded).containsExactly("two allowed memory", "two refused memory");
    }

    @Test
    void decidesExactlyAsTheLimiterItDecoratesAndSharesItsBuckets() {
        assertThat(limiter.tryAcquire("alice", TWO, 2).remaining()).isZero();

        assertThat(memory.tryAcquire("alice", TWO).allowed()).isFalse();
        assertThat(limiter.inspect("alice", TWO).tokens()).isZero();
        limiter.reset("alice", TWO);
        assertThat(memory.inspect("alice", TWO).tokens()).isEqualTo(2);
    }

    @Test
    void reportsNothingForARequestTheLimiterRejects() {
        assertThatThrownBy(() -> limiter.tryAcquire("", TWO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key");

        assertThat(recorded).isEmpty();
    }
}
