package io.tollgate.redis;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;

/**
 * A plain program on tollgate-redis, as a newcomer writes one: run by {@link PlainProgramIT} in a JVM of its
 * own with only this module's runtime classpath. Prints one decision.
 */
public final class PlainProgram {

    private PlainProgram() {}

    public static void main(String[] args) {
        Policy perClient = Policy.of("per-client", Limit.of(10, Rate.perSecond(5)));
        try (RedisRateLimiter limiter = RedisRateLimiter.builder().uri(args[0]).build()) {
            Decision decision = limiter.tryAcquire("alice", perClient);
            System.out.println("allowed " + decision.allowed() + ", remaining " + decision.remaining());
        }
    }
}
