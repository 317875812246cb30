package io.tollgate.guard;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.tollgate.TimeSource;
import java.time.Duration;

/**
 * The keys that another instance changed outside a request (a reset, a refund) lately, and when this instance
 * heard of it, so that an answer to a request sent before it heard is not learnt: the store may have decided
 * that request before the change, and the answer would bring back what the change undid (a refusal, an empty
 * bucket). The announcement and the answer travel on different connections, so either may arrive first.
 *
 * <p>A key is kept for {@link #KEPT}, longer than any answer stays on its way (the client gives up on a
 * command after five seconds), and at most as many keys as the deny cache holds; one dropped early only lets a
 * stale answer be learnt, which the deny cache's ceiling then bounds. Thread-safe.
 */
final class ChangesHeard {

    /** How long a change heard is kept. */
    static final Duration KEPT = Duration.ofSeconds(10);

    private record Key(String policy, String key) {}

    private final Cache<Key, Long> heard;
    private final TimeSource time;

    ChangesHeard(long maximumKeys, TimeSource time) {
        this.time = time;
        this.heard = Caffeine.newBuilder()
                .maximumSize(maximumKeys)
                .ticker(() -> time.nowMicros() * 1_000)
                .executor(Runnable::run)
                .expireAfterWrite(KEPT)
                .build();
    }

    /** Notes that the key's buckets changed elsewhere, as heard now. */
    void heard(String policyName, String key) {
        heard.put(new Key(policyName, key), time.nowMicros());
    }

    /** Returns whether a change of the key was heard at or after {@code sentMicros}. */
    boolean heardSince(String policyName, String key, long sentMicros) {
        if (heard.estimatedSize() == 0) {
            return false; // the usual case: nothing changed elsewhere lately
        }
        Long at = heard.getIfPresent(new Key(policyName, key));
        return at != null && at >= sentMicros;
    }
}
