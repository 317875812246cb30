package io.tollgate.benchmarks.shedding;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limiter.AbstractLimiter;
import com.netflix.concurrency.limits.limiter.AbstractPartitionedLimiter;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import io.tollgate.Priority;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Netflix's concurrency-limits as a {@link Gate}, on the replay's clock: a limiter with its default limit
 * ({@code VegasLimit.newDefault()}), either one for every request ({@link #simple()}) or partitioned by priority
 * ({@link #partitioned}), each partition guaranteed its share of the limit and borrowing what the others leave
 * unused, which is how the library serves requests of different importance. A request it refuses is refused at once.
 */
final class NetflixGate implements Gate {

    private final Limiter<Priority> limiter;
    private final long[] clock;

    private NetflixGate(Limiter<Priority> limiter, long[] clock) {
        this.limiter = limiter;
        this.clock = clock;
    }

    /** One limiter for every request, whatever its priority. */
    static NetflixGate simple() {
        long[] clock = {0};
        return new NetflixGate(
                SimpleLimiter.newBuilder().nanoClock(() -> clock[0]).build(), clock);
    }

    /** One limiter partitioned by priority: each guaranteed {@code shares} (critical, default, sheddable). */
    static NetflixGate partitioned(double[] shares) {
        long[] clock = {0};
        Partitioned builder = new Partitioned();
        builder.nanoClock(() -> clock[0]).partitionResolver(Priority::text);
        for (Priority priority : Priority.values()) {
            builder.partition(priority.text(), shares[priority.ordinal()]);
        }
        return new NetflixGate(builder.build(), clock);
    }

    @Override
    public CompletableFuture<Pass> enter(Priority priority, long nowNanos) {
        clock[0] = nowNanos;
        Optional<Limiter.Listener> listener = limiter.acquire(priority);
        return CompletableFuture.completedFuture(listener.<Pass>map(admitted -> (now, dropped) -> {
                    clock[0] = now;
                    if (dropped) {
                        admitted.onDropped();
                    } else {
                        admitted.onSuccess();
                    }
                })
                .orElse(null));
    }

    @Override
    public int limit() {
        return ((AbstractLimiter<?>) limiter).getLimit();
    }

    private static final class Partitioned extends AbstractPartitionedLimiter.Builder<Partitioned, Priority> {

        @Override
        protected Partitioned self() {
            return this;
        }
    }
}
