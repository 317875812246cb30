package io.tollgate.guard;

import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.fixtures.MapBucketStore;
import io.tollgate.fixtures.StoreConformance;

/**
 * A store written only here, in a map ({@link MapBucketStore}), under the same guard as Redis, through the store
 * conformance kit: decision for decision the in-memory limiter's. What it took to add it is this class and the
 * store's; nothing outside the tests changed.
 */
class MapStoreConformanceTest extends StoreConformance {

    @Override
    protected RateLimiter limiter(TimeSource clock) {
        return new GuardedRateLimiter<>(new MapBucketStore(clock), MapBucketStore.patient(clock));
    }

    /** The map store keeps no permits of concurrency limits: that case is skipped. */
    @Override
    protected boolean keepsPermits() {
        return false;
    }
}
