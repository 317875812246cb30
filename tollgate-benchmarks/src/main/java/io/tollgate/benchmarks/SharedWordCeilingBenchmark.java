package io.tollgate.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The ceiling for any exact limiter that writes one shared word per allowed request on a hot key: a bare
 * {@code AtomicLong} incremented by every thread. With two threads on two cores, each increment waits for
 * the cache line to cross from the other core.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SharedWordCeilingBenchmark {

    private final AtomicLong word = new AtomicLong();

    @Benchmark
    public long incrementSharedWord() {
        return word.incrementAndGet();
    }
}
