package io.tollgate.redis;

/** {@link DistributedExactnessTests} on a three-master Redis Cluster, every instance sending one script call per decision. */
class UnbatchedClusterExactnessIT extends ClusterExactnessIT {

    @Override
    RedisRateLimiter instance() {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .clusterUris(redis.cluster().uris())
                .batching(false)
                .build();
    }

    @Override
    String deployment() {
        return "cluster, unbatched";
    }
}
