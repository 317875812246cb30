package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.BucketGenerators.Step;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The in-memory limiter against {@link ReferenceModel}: for random policies and random sequences of
 * requests and pauses, every decision agrees, field for field.
 */
class InMemoryRateLimiterPropertyTest {

    private static final long START = 1_700_000_000_000_000L;

    @Property(tries = 500)
    void agreesWithTheReferenceModelDecisionForDecision(
            @ForAll("policies") Policy policy, @ForAll("steps") List<Step> steps) {
        ManualTimeSource time = new ManualTimeSource(START);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        ReferenceModel model = new ReferenceModel(policy, START);

        for (Step step : steps) {
            time.advanceMicros(step.advanceMicros());
            long cost = step.cost(policy);

            Decision expected = model.tryAcquire(time.nowMicros(), cost);
            Decision actual = limiter.tryAcquire("client", policy, cost);

            assertThat(actual)
                    .as("at %d µs, cost %d", time.nowMicros() - START, cost)
                    .isEqualTo(expected);
        }
    }

    @Property(tries = 200)
    void agreesWithTheReferenceModelAcrossRebasesOfFineGrainedRates(
            @ForAll("fineGrainedPolicies") Policy policy, @ForAll("steps") List<Step> steps) {
        ManualTimeSource time = new ManualTimeSource(START);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        ReferenceModel model = new ReferenceModel(policy, START);

        for (Step step : steps) {
            time.advanceMicros(step.advanceMicros());
            long cost = step.cost(policy);

            assertThat(limiter.tryAcquire("client", policy, cost)).isEqualTo(model.tryAcquire(time.nowMicros(), cost));
        }
    }

    @Property(tries = 300)
    void agreesWithTheReferenceModelWhenCallersWaitForTokens(
            @ForAll("policies") Policy policy, @ForAll("steps") List<Step> steps) throws InterruptedException {
        SteppingTimeSource time = new SteppingTimeSource(START);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        ReferenceModel model = new ReferenceModel(policy, START);

        for (Step step : steps) {
            time.advanceMicros(step.advanceMicros());
            long cost = step.cost(policy);
            long maxWait = step.advanceMicros();
            long sleptBefore = time.sleptMicros();

            long expectedWait = model.reserve(time.nowMicros(), cost, maxWait);
            boolean acquired = limiter.acquire("client", policy, cost, Duration.of(maxWait, ChronoUnit.MICROS));

            assertThat(acquired).isEqualTo(expectedWait >= 0);
            assertThat(time.sleptMicros() - sleptBefore).isEqualTo(Math.max(0, expectedWait));
        }
    }

    @Property(tries = 500)
    void aRefusedRequestPassesExactlyWhenItsRetryAfterHasPassed(
            @ForAll("policies") Policy policy, @ForAll("steps") List<Step> steps) {
        ManualTimeSource time = new ManualTimeSource(START);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        long cost = policy.maxCost();
        for (Step step : steps) {
            time.advanceMicros(step.advanceMicros());
            limiter.tryAcquire("client", policy, step.cost(policy));
        }
        while (limiter.tryAcquire("client", policy, cost).allowed()) {
            // empty the buckets until a request of this cost is refused
        }

        long retryMicros = micros(limiter.tryAcquire("client", policy, cost).retryAfter());
        time.advanceMicros(retryMicros - 1);
        Decision early = limiter.tryAcquire("client", policy, cost);
        time.advanceMicros(1);
        Decision onTime = limiter.tryAcquire("client", policy, cost);

        assertThat(early.allowed()).isFalse();
        assertThat(early.retryAfter()).isEqualTo(Duration.ofNanos(1_000));
        assertThat(onTime.allowed()).isTrue();
    }

    @Property(tries = 500)
    void aBucketIsFullExactlyWhenItsResetAfterHasPassed(
            @ForAll("limits") Limit generated, @ForAll("steps") List<Step> steps) {
        Limit limit = generated.withInitialTokens(generated.capacity()); // full again: as new, and new is full
        Policy policy = Policy.of("one", limit);
        ManualTimeSource time = new ManualTimeSource(START);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        Decision last = limiter.tryAcquire("client", policy, 1);
        for (Step step : steps) {
            time.advanceMicros(step.advanceMicros());
            last = limiter.tryAcquire("client", policy, step.cost(policy));
        }

        long resetMicros = micros(last.resetAfter());
        time.advanceMicros(resetMicros);
        Decision whole = limiter.tryAcquire("client", policy, limit.capacity());

        assertThat(whole.allowed()).isTrue();
        assertThat(whole.remaining()).isZero();
    }

    @Property(tries = 300)
    void aBucketFullForItsRefillTimeIsForgottenAndStartsOverWithItsInitialTokens(
            @ForAll("limits") Limit limit, @ForAll("steps") List<Step> steps) {
        Policy policy = Policy.of("one", limit);
        ManualTimeSource time = new ManualTimeSource(START);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        Decision last = limiter.tryAcquire("client", policy, 1);
        for (Step step : steps) {
            time.advanceMicros(step.advanceMicros());
            last = limiter.tryAcquire("client", policy, step.cost(policy));
        }
        long kept = limit.initialTokens() == limit.capacity() ? 0 : micros(limit.refillTime());

        time.advanceMicros(micros(last.resetAfter()));
        BucketState full = limiter.inspect("client", policy);
        time.advanceMicros(kept);
        BucketState asNew = limiter.inspect("client", policy);

        assertThat(full.tokens()).isEqualTo(kept == 0 ? limit.initialTokens() : limit.capacity());
        assertThat(asNew.tokens()).isEqualTo(limit.initialTokens());
        if (limit.initialTokens() > 0) {
            Decision all = limiter.tryAcquire("client", policy, limit.initialTokens());
            assertThat(all.allowed()).isTrue();
            assertThat(all.remaining()).isZero();
        }
    }

    @Provide
    Arbitrary<Policy> policies() {
        return BucketGenerators.policies("p");
    }

    @Provide
    Arbitrary<Policy> fineGrainedPolicies() {
        return BucketGenerators.fineGrainedPolicies();
    }

    @Provide
    Arbitrary<Limit> limits() {
        return BucketGenerators.limits();
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        return BucketGenerators.steps();
    }

    private static long micros(Duration duration) {
        return duration.toNanos() / 1_000;
    }
}
