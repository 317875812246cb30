package io.tollgate.redis;

import io.tollgate.testing.RedisServer;
import java.util.List;

/**
 * The keys a test's limiters wrote to a Redis server, less the live instances' announcements ({@code
 * tollgate:instances/live}), which every limiter without a fixed count of instances keeps there.
 */
final class StoredKeys {

    static final String ANNOUNCEMENTS = "tollgate:instances/live";

    private StoredKeys() {}

    /** Returns the keys of buckets and slots on {@code server}, in Redis's order. */
    @SuppressWarnings("unchecked")
    static List<String> of(RedisServer server) {
        return ((List<String>) server.command("KEYS", "*"))
                .stream().filter(key -> !key.equals(ANNOUNCEMENTS)).toList();
    }

    /** Returns how many keys of buckets and slots {@code server} holds. */
    static long count(RedisServer server) {
        return of(server).size();
    }
}
