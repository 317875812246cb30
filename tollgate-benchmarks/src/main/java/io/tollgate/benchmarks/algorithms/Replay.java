package io.tollgate.benchmarks.algorithms;

import java.util.ArrayList;
import java.util.List;

/**
 * The requests one algorithm admitted of one traffic pattern.
 *
 * @param admitted the times of the admitted requests, in order
 */
record Replay(Traffic traffic, String algorithm, List<Long> admitted) {

    Replay {
        admitted = List.copyOf(admitted);
    }

    /** Replays the traffic through a fresh algorithm. */
    static Replay of(Traffic traffic, Admission algorithm) {
        List<Long> admitted = new ArrayList<>();
        for (long t : traffic.offered()) {
            if (algorithm.admit(t)) {
                admitted.add(t);
            }
        }
        return new Replay(traffic, algorithm.name(), admitted);
    }

    /** The most admitted requests in any interval {@code [t, t + length)}. */
    int mostInAnyInterval(long lengthMicros) {
        int most = 0;
        int first = 0;
        for (int last = 0; last < admitted.size(); last++) {
            while (admitted.get(last) - admitted.get(first) >= lengthMicros) {
                first++;
            }
            most = Math.max(most, last - first + 1);
        }
        return most;
    }

    /**
     * How far the admitted requests go past a token bucket's bound, the most over every interval between two
     * admitted requests: the count in {@code [t_i, t_j]} less {@code capacity + rate * (t_j - t_i)}. Zero or
     * less means the bound held everywhere.
     */
    double worstExcessOverBucketBound(long capacity, double tokensPerMicro) {
        double worst = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < admitted.size(); i++) {
            for (int j = i; j < admitted.size(); j++) {
                double bound = capacity + tokensPerMicro * (admitted.get(j) - admitted.get(i));
                worst = Math.max(worst, (j - i + 1) - bound);
            }
        }
        return worst;
    }

    /** How many requests were admitted in the trailing {@code length} at each admitted request, for the chart. */
    List<Integer> trailingCounts(long lengthMicros) {
        List<Integer> counts = new ArrayList<>(admitted.size());
        int first = 0;
        for (int last = 0; last < admitted.size(); last++) {
            while (admitted.get(last) - admitted.get(first) >= lengthMicros) {
                first++;
            }
            counts.add(last - first + 1);
        }
        return counts;
    }
}
