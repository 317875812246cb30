package io.tollgate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * Random limits, policies and request sequences for property tests, drawn from one seed: the same seed gives
 * the same values, so a failing case is reproduced by its seed alone (see {@link Seeds}). Shared with the
 * tests of every backend (through this module's test jar) so that all of them are checked on the same
 * inputs. The bounds of each range come up more often than a uniform draw would give them, since that is
 * where arithmetic breaks. Not thread safe: one per case.
 */
public final class BucketGenerators {

    private static final long[] COMMON_PERIODS = {1_000_000L, 60_000_000L, 3_600_000_000L, 86_400_000_000L};

    private final SplittableRandom random;

    /** Creates the generator of the case {@code seed}. */
    public BucketGenerators(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /**
     * A limit across the supported range: small and huge capacities, common and odd rates; one in three
     * whose new buckets do not start full (empty, or partly filled).
     */
    public Limit limit() {
        Limit limit = until(() -> {
            long capacity = switch (weighted(4, 3, 1)) {
                case 0 -> between(1, 10);
                case 1 -> between(1, 1_000);
                default -> between(1, 1_000_000_000);
            };
            long tokens = weighted(3, 2) == 0 ? between(1, 10) : between(1, 1_000_000);
            long periodMicros = switch (weighted(3, 2, 1)) {
                case 0 -> COMMON_PERIODS[random.nextInt(COMMON_PERIODS.length)];
                case 1 -> between(1, 10_000_000);
                default -> between(1, 86_400_000_000L);
            };
            return limit(capacity, tokens, periodMicros);
        });
        return weighted(2, 1) == 0 ? limit : limit.withInitialTokens(between(0, limit.capacity()));
    }

    /** A policy named {@code name} with one to three limits. */
    public Policy policy(String name) {
        List<Limit> limits = new ArrayList<>();
        for (int i = (int) between(1, 3); i > 0; i--) {
            limits.add(limit());
        }
        return new Policy(name, limits);
    }

    /**
     * A policy whose rates have about 10^14 ticks per microsecond (such as 99999999999937 per 10^14 µs), so
     * that an in-memory bucket must be rebased every few dozen milliseconds of its life.
     */
    public Policy fineGrainedPolicy() {
        List<Limit> limits = new ArrayList<>();
        for (int i = (int) between(1, 2); i > 0; i--) {
            limits.add(until(() -> {
                long period = between(10_000_000_000_000L, 100_000_000_000_000L);
                return limit(between(1, 40), period - between(1, 1_000), period);
            }));
        }
        return new Policy("fine", limits);
    }

    /** A sequence of 1 to 60 pauses and requests: many without a pause, some after hours. */
    public List<Step> steps() {
        return steps(60, () -> switch (weighted(5, 4, 3, 1)) {
            case 0 -> 0L;
            case 1 -> between(1, 1_000);
            case 2 -> between(1_000, 1_000_000);
            default -> between(1_000_000, 100_000_000_000L);
        });
    }

    /**
     * A sequence of 1 to 100 steps, mostly without a pause, so that requests sent as they come pile up in
     * long bursts that hold runs of one key, policy and cost.
     */
    public List<Step> bursts() {
        return steps(100, () -> switch (weighted(12, 1, 1)) {
            case 0 -> 0L;
            case 1 -> between(1, 1_000_000);
            default -> between(1_000_000, 100_000_000_000L);
        });
    }

    private List<Step> steps(int maxSize, Supplier<Long> advanceMicros) {
        List<Step> steps = new ArrayList<>();
        for (int i = (int) between(1, maxSize); i > 0; i--) {
            steps.add(new Step(advanceMicros.get(), (int) between(0, 999), (int) between(0, 999)));
        }
        return steps;
    }

    /** A value from {@code min} to {@code max}, both included; each bound one time in twenty. */
    private long between(long min, long max) {
        int edge = random.nextInt(20);
        if (edge == 0) {
            return min;
        }
        if (edge == 1) {
            return max;
        }
        return min + random.nextLong(max - min + 1);
    }

    /** The index of one of the weights, drawn in proportion to them. */
    private int weighted(int... weights) {
        int total = 0;
        for (int weight : weights) {
            total += weight;
        }
        int draw = random.nextInt(total);
        for (int i = 0; ; i++) {
            draw -= weights[i];
            if (draw < 0) {
                return i;
            }
        }
    }

    /** Draws until the limit is one the arithmetic supports. */
    private static Limit until(Supplier<Optional<Limit>> draw) {
        while (true) {
            Optional<Limit> limit = draw.get();
            if (limit.isPresent()) {
                return limit.get();
            }
        }
    }

    private static Optional<Limit> limit(long capacity, long tokens, long periodMicros) {
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
