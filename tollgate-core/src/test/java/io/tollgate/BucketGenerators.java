package io.tollgate;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Random limits, policies and request sequences for property tests, shared with the tests of every
 * backend (through this module's test jar) so that all of them are checked on the same inputs.
 */
public final class BucketGenerators {

    private BucketGenerators() {}

    /**
     * Limits across the supported range: small and huge capacities, common and odd rates; one in three
     * whose new buckets do not start full (empty, or partly filled).
     */
    public static Arbitrary<Limit> limits() {
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
                .as(BucketGenerators::tryLimit)
                .filter(Optional::isPresent)
                .map(Optional::get)
                .flatMap(limit -> Arbitraries.frequencyOf(
                        Tuple.of(2, Arbitraries.just(limit)),
                        Tuple.of(
                                1,
                                Arbitraries.longs().between(0, limit.capacity()).map(limit::withInitialTokens))));
    }

    /** Policies named {@code name} with one to three limits. */
    public static Arbitrary<Policy> policies(String name) {
        return limits().list().ofMinSize(1).ofMaxSize(3).map(limits -> new Policy(name, limits));
    }

    /**
     * Policies whose rates have about 10^14 ticks per microsecond (such as 99999999999937 per 10^14 µs), so
     * that an in-memory bucket must be rebased every few dozen milliseconds of its life.
     */
    public static Arbitrary<Policy> fineGrainedPolicies() {
        Arbitrary<Limit> limit = Combinators.combine(
                        Arbitraries.longs().between(1, 40),
                        Arbitraries.longs().between(10_000_000_000_000L, 100_000_000_000_000L),
                        Arbitraries.longs().between(1, 1_000))
                .as((capacity, period, gap) -> tryLimit(capacity, period - gap, period))
                .filter(Optional::isPresent)
                .map(Optional::get);
        return limit.list().ofMinSize(1).ofMaxSize(2).map(limits -> new Policy("fine", limits));
    }

    /** Sequences of 1 to 60 pauses and requests: many without a pause, some after hours. */
    public static Arbitrary<List<Step>> steps() {
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(5, Arbitraries.just(0L)),
                Tuple.of(4, Arbitraries.longs().between(1, 1_000)),
                Tuple.of(3, Arbitraries.longs().between(1_000, 1_000_000)),
                Tuple.of(1, Arbitraries.longs().between(1_000_000, 100_000_000_000L)));
        Arbitrary<Integer> pick = Arbitraries.integers().between(0, 999);
        return Combinators.combine(advance, pick, pick)
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

    /**
     * A pause, then a request. Most requests cost 1, the rest anything the policy allows; {@code choice}
     * lets a test pick among alternatives (such as two versions of a policy) without another generator.
     */
    public record Step(long advanceMicros, int costPick, int choice) {

        /** Returns the cost of this step's request under {@code policy}. */
        public long cost(Policy policy) {
            return costPick < 600 ? 1 : 1 + costPick % policy.maxCost();
        }

        /** Returns one of {@code options}, chosen by this step. */
        @SafeVarargs
        public final <T> T pick(T... options) {
            return options[choice % options.length];
        }
    }
}
