package io.tollgate.redis;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.Permit;
import java.time.Duration;

/**
 * An instance that takes permits and holds them until it is killed, run by {@link RedisPermitsTest} in a JVM
 * of its own: arguments are the Redis URI, the limit's name, its maximum, its lease in milliseconds and how
 * many permits to take. Prints {@code held N} once it holds them.
 */
public final class PermitHolder {

    private PermitHolder() {}

    public static void main(String[] args) throws InterruptedException {
        ConcurrencyLimit limit =
                new ConcurrencyLimit(args[1], Integer.parseInt(args[2]), Duration.ofMillis(Long.parseLong(args[3])));
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(args[0])
                .timeout(Duration.ofSeconds(5))
                .build();
        int held = 0;
        for (int i = 0; i < Integer.parseInt(args[4]); i++) {
            Permit permit = limiter.tryAcquirePermit("customer-42", limit);
            if (permit.acquired()) {
                held++;
            }
        }
        System.out.println("held " + held);
        System.out.flush();
        Thread.sleep(Duration.ofMinutes(5).toMillis());
    }
}
