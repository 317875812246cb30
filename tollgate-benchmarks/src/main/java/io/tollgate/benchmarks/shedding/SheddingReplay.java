package io.tollgate.benchmarks.shedding;

import io.tollgate.Priority;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One run of the replay: requests arrive as a Poisson process whose rate follows the {@link LoadProfile}, each of a
 * priority drawn from a fixed mix, and go to the {@link SimulatedService} through a {@link Gate} (which
 * may refuse them at once: shed) or straight. A client waits {@code timeout} for its answer and then gives up (the
 * guard, like a proxy, counts that as a drop). Time is simulated: the same seed gives the same run, to the request.
 *
 * @param name how the chart and the table call it
 * @param seconds what happened to the requests that arrived in each second, in order
 */
record SheddingReplay(String name, double capacityPerSecond, List<Second> seconds) {

    private static final long SECOND = 1_000_000_000L;

    SheddingReplay {
        seconds = List.copyOf(seconds);
    }

    /**
     * What happened to the requests that arrived in one second, by priority ({@link Priority#ordinal()}).
     *
     * @param latencies how long each admitted request took to be answered (served, or given up at the timeout),
     *     sorted
     * @param meanLimit the guard's learnt limit as the requests arriving in the second found it, on average; 0 where
     *     there is no guard
     */
    record Second(
            double offeredRate,
            int[] offered,
            int[] served,
            int[] shed,
            int[] timedOut,
            long[] latencies,
            double meanLimit) {}

    /** The shares and figures of the seconds {@code [from, to)}. */
    record Summary(double goodputPerSecond, long p99Nanos, double[] success, int shed, int timedOut) {}

    /**
     * Runs the replay.
     *
     * @param guard the gate in front of the service, a fresh one; null for none
     * @param mix the share of each priority, by ordinal, adding up to 1
     */
    static SheddingReplay run(
            String name,
            LoadProfile profile,
            Supplier<SimulatedService> services,
            Gate guard,
            double[] mix,
            long timeoutNanos,
            long seed) {
        Random random = new Random(seed);
        SimulatedService service = services.get();
        PriorityQueue<Event> events = new PriorityQueue<>();
        long[] clock = {0};
        long[] sequence = {0};
        int length = (int) (profile.durationNanos() / SECOND);
        Tally[] tallies = new Tally[length];
        for (int i = 0; i < length; i++) {
            tallies[i] = new Tally();
        }
        Consumer<SimulatedRequest> serve = request -> {
            events.add(new Event(request.arrivedNanos + timeoutNanos, sequence[0]++, Kind.TIMEOUT, request));
            if (service.accept(request) != null) {
                events.add(new Event(clock[0] + service.serviceNanos(), sequence[0]++, Kind.DONE, request));
            }
        };
        events.add(new Event(nextArrival(0, profile, random), sequence[0]++, Kind.ARRIVAL, null));
        while (!events.isEmpty()) {
            Event event = events.poll();
            long now = event.nanos;
            clock[0] = now;
            switch (event.kind) {
                case ARRIVAL -> {
                    SimulatedRequest request = new SimulatedRequest(now, priority(mix, random));
                    Tally tally = tallies[(int) (now / SECOND)];
                    tally.offered[request.priority.ordinal()]++;
                    long next = nextArrival(now, profile, random);
                    if (next < profile.durationNanos()) {
                        events.add(new Event(next, sequence[0]++, Kind.ARRIVAL, null));
                    }
                    if (guard == null) {
                        serve.accept(request);
                        continue;
                    }
                    tally.limits += guard.limit();
                    CompletableFuture<Gate.Pass> admission = guard.enter(request.priority, now);
                    if (!admission.isDone()) {
                        events.add(new Event(now + guard.maxWaitNanos(), sequence[0]++, Kind.EXPIRE, null));
                    }
                    admission.thenAccept(slot -> {
                        if (slot == null) {
                            tally.shed[request.priority.ordinal()]++;
                        } else {
                            request.slot = slot;
                            serve.accept(request);
                        }
                    });
                }
                case DONE -> {
                    SimulatedRequest request = event.request;
                    SimulatedRequest next = service.finish();
                    if (next != null) {
                        events.add(new Event(now + service.serviceNanos(), sequence[0]++, Kind.DONE, next));
                    }
                    if (!request.answered) {
                        request.answered = true;
                        Tally tally = tallies[(int) (request.arrivedNanos / SECOND)];
                        tally.served[request.priority.ordinal()]++;
                        tally.latency(now - request.arrivedNanos);
                        if (request.slot != null) {
                            request.slot.leave(now, false);
                        }
                    }
                }
                case TIMEOUT -> {
                    SimulatedRequest request = event.request;
                    if (!request.answered) {
                        request.answered = true;
                        Tally tally = tallies[(int) (request.arrivedNanos / SECOND)];
                        tally.timedOut[request.priority.ordinal()]++;
                        tally.latency(timeoutNanos);
                        if (request.slot != null) {
                            request.slot.leave(now, true);
                        }
                    }
                }
                case EXPIRE -> guard.expire(now);
            }
        }
        List<Second> seconds = new ArrayList<>();
        for (int i = 0; i < length; i++) {
            seconds.add(tallies[i].second(profile.rateAt(i * SECOND + SECOND / 2)));
        }
        return new SheddingReplay(name, service.capacityPerSecond(), seconds);
    }

    /** Sums the seconds {@code [from, to)}. */
    Summary summary(int from, int to) {
        int priorities = Priority.values().length;
        int[] offered = new int[priorities];
        int[] served = new int[priorities];
        int shed = 0;
        int timedOut = 0;
        List<long[]> latencies = new ArrayList<>();
        for (Second second : seconds.subList(from, to)) {
            for (int p = 0; p < priorities; p++) {
                offered[p] += second.offered()[p];
                served[p] += second.served()[p];
                shed += second.shed()[p];
                timedOut += second.timedOut()[p];
            }
            latencies.add(second.latencies());
        }
        double[] success = new double[priorities];
        int goodput = 0;
        for (int p = 0; p < priorities; p++) {
            success[p] = offered[p] == 0 ? 1 : (double) served[p] / offered[p];
            goodput += served[p];
        }
        long[] all = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        return new Summary((double) goodput / (to - from), percentile(all, 0.99), success, shed, timedOut);
    }

    /** The {@code fraction} percentile of sorted values (nearest rank), 0 for none. */
    static long percentile(long[] sorted, double fraction) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(fraction * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    private static long nextArrival(long now, LoadProfile profile, Random random) {
        double rate = profile.rateAt(now);
        return now + Math.max(1, (long) (-Math.log(1 - random.nextDouble()) * SECOND / rate));
    }

    private static Priority priority(double[] mix, Random random) {
        double draw = random.nextDouble();
        for (Priority priority : Priority.values()) {
            draw -= mix[priority.ordinal()];
            if (draw < 0) {
                return priority;
            }
        }
        return Priority.SHEDDABLE;
    }

    private enum Kind {
        ARRIVAL,
        DONE,
        TIMEOUT,
        EXPIRE
    }

    private record Event(long nanos, long sequence, Kind kind, SimulatedRequest request) implements Comparable<Event> {

        @Override
        public int compareTo(Event other) {
            int byTime = Long.compare(nanos, other.nanos);
            return byTime != 0 ? byTime : Long.compare(sequence, other.sequence);
        }
    }

    private static final class Tally {

        final int[] offered = new int[Priority.values().length];
        final int[] served = new int[Priority.values().length];
        final int[] shed = new int[Priority.values().length];
        final int[] timedOut = new int[Priority.values().length];
        long[] latencies = new long[64];
        int count;
        long limits;

        void latency(long nanos) {
            if (count == latencies.length) {
                latencies = Arrays.copyOf(latencies, count * 2);
            }
            latencies[count++] = nanos;
        }

        Second second(double rate) {
            long[] sorted = Arrays.copyOf(latencies, count);
            Arrays.sort(sorted);
            int arrived = Arrays.stream(offered).sum();
            return new Second(
                    rate, offered, served, shed, timedOut, sorted, arrived == 0 ? 0 : (double) limits / arrived);
        }
    }
}
