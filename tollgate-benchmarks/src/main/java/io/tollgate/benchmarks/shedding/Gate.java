package io.tollgate.benchmarks.shedding;

import io.tollgate.Priority;
import java.util.concurrent.CompletableFuture;

/** What stands between the clients and the service in a replay: Tollgate's guard, a peer's limiter, or nothing. */
interface Gate {

    /** A request let through: it leaves once, when its answer comes or its client gives up. */
    interface Pass {

        void leave(long nowNanos, boolean dropped);
    }

    /** Admits a request arriving at {@code nowNanos}: a pass now or later, or null (refused, at once or later). */
    CompletableFuture<Pass> enter(Priority priority, long nowNanos);

    /** Refuses the requests that waited their most by {@code nowNanos}; nothing for a gate without a queue. */
    default void expire(long nowNanos) {}

    /** How long a request may wait for room, 0 for a gate that refuses at once. */
    default long maxWaitNanos() {
        return 0;
    }

    /** The limit on requests in flight now. */
    int limit();
}
