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
 * The ceiling for an exact limiter on one hot key: read the clock, then compare-and-set one shared word
 * (here {@code max(word, now) + 1}, a token bucket with nothing else around it). Every allowed decision of
 * such a limiter pays at least this; with two threads each update must pull the word's cache line from the
 * other core.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ClockAndCasCeilingBenchmark {

    private final AtomicLong word = new AtomicLong();

    @Benchmark
    public long readClockThenCompareAndSet() {
        long now = System.nanoTime();
        long current = word.get();
        for (; ; ) {
            long witness = word.compareAndExchange(current, Math.max(current, now) + 1);
            if (witness == current) {
                return witness;
            }
            current = witness;
        }
    }
}
