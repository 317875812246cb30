package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.DecisionEvent;
import io.tollgate.DecisionListener;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.testing.FreePorts;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Listeners of a limiter on Redis: told of every decision whatever made it (Redis, the deny cache, the failure
 * policy) and of every charge, once each.
 */
class RedisDecisionListenerTest {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    private static final Policy TWO = Policy.of("two", Limit.of(2, Rate.perMinute(1)));

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
    private final List<String> told = new CopyOnWriteArrayList<>();
    private final DecisionListener listener =
            event -> told.add(event.key() + " " + event.cost() + " " + event.outcome() + " " + event.source());
    private RedisRateLimiter limiter;

    @AfterEach
    void close() {
        if (limiter != null) {
            limiter.close();
        }
    }

    @Test
    void tellsRedisDecisionsThenTheDenyCachesRefusalsEachWithItsSource() {
        limiter = RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .keyPrefix("listened:")
                .clientClock(time)
                .build();
        limiter.onDecision(listener);

        limiter.tryAcquireAsync("alice", TWO, 1).toCompletableFuture().join();
        limiter.tryAcquire("alice", TWO, 2); // refused by Redis: the deny cache learns it
        limiter.tryAcquire("alice", TWO, 2); // refused from the deny cache, Redis not asked

        assertThat(told)
                .containsExactly("alice 1 ALLOWED redis", "alice 2 REFUSED redis", "alice 2 REFUSED deny_cache");
    }

    @Test
    void tellsChargesAndNothingOfRefundsResetsOrReads() {
        limiter = RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .keyPrefix("charged:")
                .clientClock(time)
                .build();
        limiter.onDecision(listener);

        limiter.charge("bob", TWO, 3);
        limiter.refundAsync("bob", TWO, 1).toCompletableFuture().join();
        limiter.inspect("bob", TWO);
        limiter.reset("bob", TWO);

        assertThat(told).containsExactly("bob 3 CHARGED redis");
    }

    @Test
    void tellsTheFailurePolicysDecisionsOnceAsFallback() {
        limiter = RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri("redis://127.0.0.1:" + FreePorts.nobodyListens())
                .failurePolicy(FailurePolicy.ALLOW)
                .clientClock(time)
                .build();
        List<DecisionEvent> events = new CopyOnWriteArrayList<>();
        limiter.onDecision(events::add);

        limiter.tryAcquire("carol", TWO);
        limiter.tryAcquire("carol", TWO);

        assertThat(events)
                .extracting(event -> event.outcome() + " " + event.source())
                .containsExactly("ALLOWED fallback", "ALLOWED fallback");
    }

    @Test
    void stopsTellingACancelledListener() {
        limiter = RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .keyPrefix("cancelled:")
                .clientClock(time)
                .build();
        DecisionListener.Subscription subscription = limiter.onDecision(listener);
        limiter.tryAcquire("dave", TWO);

        subscription.cancel();
        limiter.tryAcquire("dave", TWO);

        assertThat(told).containsExactly("dave 1 ALLOWED redis");
    }
}
