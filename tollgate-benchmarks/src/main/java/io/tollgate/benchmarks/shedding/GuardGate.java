package io.tollgate.benchmarks.shedding;

import io.tollgate.Priority;
import io.tollgate.overload.OverloadGuard;
import java.util.concurrent.CompletableFuture;

/** Tollgate's overload guard as a {@link Gate}. */
final class GuardGate implements Gate {

    private final OverloadGuard guard;

    GuardGate(OverloadGuard guard) {
        this.guard = guard;
    }

    @Override
    public CompletableFuture<Pass> enter(Priority priority, long nowNanos) {
        return guard.enter(priority, nowNanos).thenApply(slot -> slot == null ? null : slot::leave);
    }

    @Override
    public void expire(long nowNanos) {
        guard.expire(nowNanos);
    }

    @Override
    public long maxWaitNanos() {
        return guard.maxWaitNanos();
    }

    @Override
    public int limit() {
        return guard.limit();
    }
}
