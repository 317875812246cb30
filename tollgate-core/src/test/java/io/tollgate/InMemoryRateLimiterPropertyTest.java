package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tollgate.fixtures.BucketGenerators;
import io.tollgate.fixtures.BucketGenerators.Step;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.fixtures.Seeds;
import io.tollgate.fixtures.SteppingTimeSource;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The in-memory limiter against {@link ReferenceModel}: for random policies and random sequences of
 * requests and pauses, every decision agrees, field for field. Each case is a seed ({@link Seeds}).
 */
class InMemoryRateLimiterPropertyTest {

    private static final long START = 1_700_000_000_000_000L;

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("fiveHundredCases")
    void agreesWithTheReferenceModelDecisionForDecision(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy policy = generate.policy("p");
        List<Step> steps = generate.steps();
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

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("twoHundredCases")
    void agreesWithTheReferenceModelAcrossRebasesOfFineGrainedRates(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy policy = generate.fineGrainedPolicy();
        List<Step> steps = generate.steps();
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

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("threeHundredCases")
    void agreesWithTheReferenceModelWhenCallersWaitForTokens(long seed) throws InterruptedException {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy policy = generate.policy("p");
        List<Step> steps = generate.steps();
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

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("threeHundredCases")
    void agreesWithTheReferenceModelWhenCostsAreChargedAfterTheFact(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Random random = new Random(seed);
        Policy generated = generate.policy("p");
        // debts stay far below 2^53 ticks, the most a bucket counts, however many charges land
        assumeTrue(generated.limits().stream().allMatch(limit -> limit.fillTicks() < 1L << 44));
        long longestFill = Policy.defaultMaxDebt(generated.limits()).toNanos() / 1_000;
        // the maximum debt: the default (the longest fill), none, some, or more than any charge here reaches
        Policy policy = switch (random.nextInt(4)) {
            case 0 -> generated;
            case 1 -> generated.withMaxDebt(Duration.ZERO);
            case 2 -> generated.withMaxDebt(Duration.of(1 + random.nextLong(3 * longestFill), ChronoUnit.MICROS));
            default -> generated.withMaxDebt(Duration.ofDays(365_000));
        };
        List<Step> steps = generate.steps();
        ManualTimeSource time = new ManualTimeSource(START);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        ReferenceModel model = new ReferenceModel(policy, START);

        for (Step step : steps) {
            time.advanceMicros(step.advanceMicros());
            if (step.pick(true, false, false)) {
                long cost = step.cost(policy) * (1 + step.choice() % 4); // up to four times the capacity

                assertThat(limiter.charge("client", policy, cost))
                        .as("charge of %d", cost)
                        .isEqualTo(model.charge(time.nowMicros(), cost, policy.maxDebtMicros()));
            } else {
                long cost = step.cost(policy);

                assertThat(limiter.tryAcquire("client", policy, cost))
                        .isEqualTo(model.tryAcquire(time.nowMicros(), cost));
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("fiveHundredCases")
    void aRefusedRequestPassesExactlyWhenItsRetryAfterHasPassed(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy policy = generate.policy("p");
        List<Step> steps = generate.steps();
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

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("fiveHundredCases")
    void aBucketIsFullExactlyWhenItsResetAfterHasPassed(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Limit generated = generate.limit();
        List<Step> steps = generate.steps();
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

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("threeHundredCases")
    void aBucketFullForItsRefillTimeIsForgottenAndStartsOverWithItsInitialTokens(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Limit limit = generate.limit();
        List<Step> steps = generate.steps();
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

    static LongStream fiveHundredCases() {
        return Seeds.of(500);
    }

    static LongStream threeHundredCases() {
        return Seeds.of(300);
    }

    static LongStream twoHundredCases() {
        return Seeds.of(200);
    }

    private static long micros(Duration duration) {
        return duration.toNanos() / 1_000;
    }
}
