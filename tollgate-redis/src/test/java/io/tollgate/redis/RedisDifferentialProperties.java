package io.tollgate.redis;

import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.fixtures.StoreConformance;
import io.tollgate.testing.RedisServer;
import java.util.Random;

/**
 * Redis through the store conformance kit ({@link StoreConformance}): the Redis limiter against the in-memory one,
 * with the same clock, decision for decision. Subclasses choose the Redis to run against.
 */
abstract class RedisDifferentialProperties extends StoreConformance {

    /** Returns the server to run against, started by the subclass. */
    abstract RedisServer server();

    @Override
    protected RateLimiter limiter(TimeSource clock) {
        return Connections.connected(connect(RedisRateLimiter.builder())
                .timeout(PATIENT)
                .clientClock(clock)
                .build());
    }

    /** Charges go through the batch script when batching is on, the one-decision script when it is off. */
    @Override
    protected RateLimiter limiterForCharges(TimeSource clock, Random random) {
        return Connections.connected(connect(RedisRateLimiter.builder())
                .timeout(PATIENT)
                .clientClock(clock)
                .batching(random.nextBoolean())
                .build());
    }

    /** Points the builder at the Redis to run against: {@link #server()}, unless a subclass says otherwise. */
    RedisRateLimiter.Builder connect(RedisRateLimiter.Builder builder) {
        return builder.uri(server().uri());
    }
}
