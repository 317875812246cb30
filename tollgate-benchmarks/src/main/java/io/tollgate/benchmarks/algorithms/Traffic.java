package io.tollgate.benchmarks.algorithms;

import java.util.ArrayList;
import java.util.List;

/**
 * One client's requests, as times in microseconds from the replay's start, in order.
 *
 * @param name a short name, for the chart's columns
 * @param offered when the client sends its requests
 */
record Traffic(String name, List<Long> offered) {

    private static final long SECOND = 1_000_000;

    Traffic {
        offered = List.copyOf(offered);
    }

    /** A request every half second for {@code seconds}: twice the rate, evenly. */
    static Traffic steady(long seconds) {
        List<Long> times = new ArrayList<>();
        for (long t = 0; t < seconds * SECOND; t += SECOND / 2) {
            times.add(t);
        }
        return new Traffic("steady", times);
    }

    /** Bursts of {@code size} requests, 20 ms apart, every 7 s from 2 s on, for {@code seconds}. */
    static Traffic bursty(long seconds, int size) {
        List<Long> times = new ArrayList<>();
        for (long start = 2 * SECOND; start < seconds * SECOND; start += 7 * SECOND) {
            for (int i = 0; i < size; i++) {
                times.add(start + i * 20_000L);
            }
        }
        return new Traffic("bursty", times);
    }

    /**
     * The edge attack: the whole quota in the half second before a window's edge, and again in the half second
     * after it, 50 ms apart.
     */
    static Traffic boundaryAttack(long limit, long edgeMicros) {
        List<Long> times = new ArrayList<>();
        for (int i = 0; i < limit; i++) {
            times.add(edgeMicros - SECOND / 2 + i * 50_000L);
        }
        for (int i = 0; i < limit; i++) {
            times.add(edgeMicros + i * 50_000L);
        }
        return new Traffic("boundary attack", times);
    }
}
