package io.tollgate.redis;

import io.tollgate.testing.RedisExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link DistributedExactnessTests} on one standalone Redis, with the default settings (batching). */
class StandaloneExactnessIT extends DistributedExactnessTests {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @BeforeEach
    void flush() {
        redis.server().command("FLUSHALL");
    }

    @Override
    RedisRateLimiter instance() {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .build();
    }

    @Override
    long redisMicros() {
        return redis.server().timeMicros();
    }

    @Override
    String deployment() {
        return "standalone";
    }
}
