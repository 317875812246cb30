package io.tollgate.redis;

/** {@link DistributedExactnessTests} on one standalone Redis, every instance batching its decisions. */
class BatchedStandaloneExactnessIT extends StandaloneExactnessIT {

    @Override
    RedisRateLimiter instance() {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .batching(true)
                .build();
    }

    @Override
    String deployment() {
        return "standalone, batching";
    }
}
