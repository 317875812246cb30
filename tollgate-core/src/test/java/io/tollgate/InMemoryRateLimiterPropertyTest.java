package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

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

        long resetMicros = micros(last.resetAfter());
        time.advanceMicros(resetMicros);
        Decision whole = limiter.tryAcquire("client", policy, limit.capacity());

        assertThat(whole.allowed()).isTrue();
        assertThat(whole.remaining()).isZero();
    }

    @Provide
    Arbitrary<Policy> policies() {
        return limits().list().ofMinSize(1).ofMaxSize(3).map(limits -> new Policy("p", limits));
    }

    @Provide
    Arbitrary<Policy> fineGrainedPolicies() {
        // Rates like 99999999999937 per 10^14 µs: about 10^14 ticks per µs, so a bucket must be rebased
        // every few dozen milliseconds of its life.
        Arbitrary<Limit> limit = Combinators.combine(
                        Arbitraries.longs().between(1, 40),
                        Arbitraries.longs().between(10_000_000_000_000L, 100_000_000_000_000L),
                        Arbitraries.longs().between(1, 1_000))
                .as((capacity, period, gap) -> tryLimit(capacity, period - gap, period))
                .filter(Optional::isPresent)
                .map(Optional::get);
        return limit.list().ofMinSize(1).ofMaxSize(2).map(limits -> new Policy("fine", limits));
    }

    @Provide
    Arbitrary<Limit> limits() {
        Arbitrary<Long> capacity = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.longs().between(1, 10)),
                Tuple.of(3, Arbitraries.longs().between(1, 1_000)),
                Tuple.of(1, Arbitraries.longs().between(1, 1_000_000_000)));
        Arbitrary<Long> periodMicros = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.of(1_000_000L, 60_000_000L, 3_600_000_000L, 86_400_000_000L)),
                Tuple.of(2, Arbitraries.longs().between(1, 10_000_000)),
                Tuple.of(1, Arbitraries.longs().between(1, 86_400_000_000L)));
        Arbitrary<Long> tokens = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.longs().between(1, 10)),
                Tuple.of(2, Arbitraries.longs().between(1, 1_000_000)));
        return Combinators.combine(capacity, tokens, periodMicros)
                .as(InMemoryRateLimiterPropertyTest::tryLimit)
                .filter(Optional::isPresent)
                .map(Optional::get);
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(5, Arbitraries.just(0L)),
                Tuple.of(4, Arbitraries.longs().between(1, 1_000)),
                Tuple.of(3, Arbitraries.longs().between(1_000, 1_000_000)),
                Tuple.of(1, Arbitraries.longs().between(1_000_000, 100_000_000_000L)));
        Arbitrary<Integer> costPick = Arbitraries.integers().between(0, 999);
        return Combinators.combine(advance, costPick)
                .as(Step::new)
                .list()
                .ofMinSize(1)
                .ofMaxSize(60);
    }

    private static Optional<Limit> tryLimit(long capacity, long tokens, long periodMicros) {
        try {
            return Optional.of(Limit.of(capacity, Rate.of(tokens, Duration.ofNanos(periodMicros * 1_000))));
        } catch (IllegalArgumentException outsideTheSupportedRange) {
            return Optional.empty();
        }
    }

    private static long micros(Duration duration) {
        return duration.toNanos() / 1_000;
    }

    /** A pause, then a request; most requests cost 1, the rest anything the policy allows. */
    record Step(long advanceMicros, int costPick) {
        long cost(Policy policy) {
            return costPick < 600 ? 1 : 1 + costPick % policy.maxCost();
        }
    }
}
