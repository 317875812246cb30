package io.tollgate.benchmarks.algorithms;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import java.time.Duration;

/**
 * Tollgate's token bucket, the in-memory limiter itself on a clock the replay sets: {@code capacity} tokens,
 * refilled at {@code capacity} per window.
 */
final class TokenBucketAdmission implements Admission {

    private final ReplayClock clock = new ReplayClock();
    private final RateLimiter limiter;
    private final Policy policy;

    TokenBucketAdmission(long capacity, Duration window) {
        this.limiter = InMemoryRateLimiter.builder().timeSource(clock).build();
        this.policy = Policy.of("replay", Limit.of(capacity, Rate.of(capacity, window)));
    }

    @Override
    public String name() {
        return "token bucket (Tollgate)";
    }

    @Override
    public boolean admit(long micros) {
        clock.now = micros;
        return limiter.tryAcquire("client", policy).allowed();
    }

    /** The replay's time; it never sleeps. */
    private static final class ReplayClock implements TimeSource {
        private long now;

        @Override
        public long nowMicros() {
            return now;
        }

        @Override
        public void sleepMicros(long micros) {
            now += micros;
        }
    }
}
