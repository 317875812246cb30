package io.tollgate.redis;

/** {@link DistributedExactnessTests} on a three-master Redis Cluster, every instance batching per slot. */
class BatchedClusterExactnessIT extends ClusterExactnessIT {

    @Override
    RedisRateLimiter instance() {
        return RedisRateLimiter.builder()
                .timeout(PATIENT)
                .clusterUris(redis.cluster().uris())
                .batching(true)
                .build();
    }

    @Override
    String deployment() {
        return "cluster, batching";
    }
}
