package io.tollgate.benchmarks.shedding;

import java.util.ArrayDeque;
import java.util.Random;

/**
 * A service that serves {@code workers} requests at once, each in a base time plus an exponentially distributed
 * extra (a service's usual long tail), and queues the rest first in, first out. It does not know when a client has
 * given up: a request queued before its client timed out is still served, as a thread-per-request server does.
 */
final class SimulatedService {

    private final int workers;
    private final long baseNanos;
    private final long extraMeanNanos;
    private final Random random;
    private final ArrayDeque<SimulatedRequest> queue = new ArrayDeque<>();
    private int busy;

    SimulatedService(int workers, long baseNanos, long extraMeanNanos, Random random) {
        this.workers = workers;
        this.baseNanos = baseNanos;
        this.extraMeanNanos = extraMeanNanos;
        this.random = random;
    }

    /** Requests served per second at most: workers over the mean service time. */
    double capacityPerSecond() {
        return workers * 1e9 / (baseNanos + extraMeanNanos);
    }

    /** Takes a request: returns it if a worker starts on it now, null if it waits in the queue. */
    SimulatedRequest accept(SimulatedRequest request) {
        if (busy < workers) {
            busy++;
            return request;
        }
        queue.addLast(request);
        return null;
    }

    /** A worker finished: returns the request it starts on next, or null if none waits. */
    SimulatedRequest finish() {
        SimulatedRequest next = queue.pollFirst();
        if (next == null) {
            busy--;
        }
        return next;
    }

    /** How long the request a worker starts now takes. */
    long serviceNanos() {
        return baseNanos + (long) (-Math.log(1 - random.nextDouble()) * extraMeanNanos);
    }
}
