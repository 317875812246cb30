package io.tollgate.http;

import io.tollgate.Policy;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The {@code RateLimit-Policy} value of each policy a request limiter answered for, kept by the policy's identity: a
 * policy is immutable, so its value never changes, and building it anew took a few percent of a decision API
 * answer. Looked up without a lock (a copy of the map is published on each addition, as additions are few: the
 * policies of one configuration); at most {@value #MOST} policies are kept (overrides may make one per request),
 * beyond which the value is built each time.
 *
 * <p>Thread-safe.
 */
final class PolicyFields {

    static final int MOST = 256;

    private volatile Map<Policy, String> values = new IdentityHashMap<>();

    /** Returns the {@code RateLimit-Policy} value of {@code policy}. */
    String of(Policy policy) {
        String value = values.get(policy);
        if (value != null) {
            return value;
        }
        value = RateLimitFields.policy(policy);
        Map<Policy, String> known = values;
        if (known.size() < MOST) {
            Map<Policy, String> more = new IdentityHashMap<>(known);
            more.put(policy, value);
            values = more; // a racing addition may be lost: that policy's value is built again next time
        }
        return value;
    }

    /** Returns how many policies' values are kept. */
    int size() {
        return values.size();
    }
}
