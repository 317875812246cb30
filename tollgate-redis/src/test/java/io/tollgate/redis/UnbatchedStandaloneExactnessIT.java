package io.tollgate.redis;

/** {@link DistributedExactnessTests} on one standalone Redis, every instance sending one script call per decision. */
class UnbatchedStandaloneExactnessIT extends StandaloneExactnessIT {

    @Override
    RedisRateLimiter instance() {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .batching(false)
                .build();
    }

    @Override
    String deployment() {
        return "standalone, unbatched";
    }
}
