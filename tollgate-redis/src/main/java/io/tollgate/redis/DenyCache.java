package io.tollgate.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.TimeSource;

/**
 * Remembers refusals, so that a client hammering an empty bucket is refused locally instead of costing a
 * Redis call per request.
 *
 * <p>When Redis refuses a request of cost {@code c} with retry-after {@code T}, no request of cost {@code
 * c} can pass before {@code T} has elapsed: other instances can only take tokens from the bucket, never add
 * them. So until then requests of that cost are refused here, with the retry-after that Redis would give,
 * and requests of any other cost still go to Redis. {@code T} is counted from when the request was sent,
 * before Redis decided, so a local refusal never outlasts the real one. Like any decision's, the retry-after
 * given assumes that nobody else takes tokens meanwhile; if other instances do, the real one is longer.
 *
 * <p>Bounded, and each entry expires when its refusal does. Thread-safe.
 */
final class DenyCache {

    private record Key(String policy, String key) {}

    private record Denial(Policy policy, long cost, long untilMicros, long sentMicros, Decision decision) {}

    private final Cache<Key, Denial> denials;

    DenyCache(long maximumKeys, TimeSource time) {
        this.denials = Caffeine.newBuilder()
                .maximumSize(maximumKeys)
                .ticker(() -> time.nowMicros() * 1_000)
                .executor(Runnable::run)
                .expireAfter(new UntilAllowed())
                .build();
    }

    /**
     * Returns the refusal of a request of {@code cost} at {@code nowMicros} if a remembered one covers it,
     * otherwise null. The refusal is what Redis would answer now: retry-after and reset-after counted down,
     * and the tokens regained meanwhile (whole tokens only, still fewer than the cost).
     */
    Decision refusal(Policy policy, String key, long cost, long nowMicros) {
        Denial denial = denials.getIfPresent(new Key(policy.name(), key));
        if (denial == null || cost != denial.cost || nowMicros >= denial.untilMicros || !denial.policy.equals(policy)) {
            return null;
        }
        Decision refused = denial.decision;
        long elapsed = Math.max(0, nowMicros - denial.sentMicros);
        long reset = Math.max(0, refused.resetAfterMicros() - elapsed);
        long remaining = remaining(refused.limit(), cost, reset);
        if (remaining < 0) {
            return null; // cannot be told exactly here: ask Redis
        }
        return new Decision(
                false, refused.limit(), refused.limitIndex(), remaining, denial.untilMicros - nowMicros, reset);
    }

    /**
     * Returns the whole tokens of a refused limit that is full again in {@code resetMicros}, or -1 if that
     * cannot be told exactly: while a request of {@code cost} is refused the bucket holds fewer than {@code
     * cost} tokens, so for a cost of 1 that is 0; otherwise, when a tick is a microsecond, the bucket's
     * debt is exactly its reset-after.
     */
    private static long remaining(Limit limit, long cost, long resetMicros) {
        if (cost == 1) {
            return 0;
        }
        if (limit.refill().ticksPerMicrosecond() != 1) {
            return -1;
        }
        long fill = limit.capacity() * limit.refill().ticksPerToken();
        return resetMicros >= fill ? 0 : (fill - resetMicros) / limit.refill().ticksPerToken();
    }

    /** Returns the microseconds until a remembered refusal of this cost ends; 0 if there is none. */
    long refusedForMicros(Policy policy, String key, long cost, long nowMicros) {
        Decision refusal = refusal(policy, key, cost, nowMicros);
        return refusal == null ? 0 : refusal.retryAfterMicros();
    }

    /**
     * Takes note of what Redis answered for a request of {@code cost} sent at {@code sentMicros}: a refusal
     * is remembered; anything else forgets what was remembered for the key, since this instance's own
     * request has just changed the bucket.
     */
    void update(Policy policy, String key, long cost, long sentMicros, Decision answer) {
        Key cacheKey = new Key(policy.name(), key);
        if (answer.allowed() || answer.retryAfterMicros() == 0) {
            denials.invalidate(cacheKey);
        } else {
            denials.put(cacheKey, new Denial(policy, cost, sentMicros + answer.retryAfterMicros(), sentMicros, answer));
        }
    }

    /** Entries live until the refusal they hold ends. */
    private final class UntilAllowed implements Expiry<Key, Denial> {

        @Override
        public long expireAfterCreate(Key key, Denial denial, long currentTime) {
            return Math.max(0, (denial.untilMicros - currentTime / 1_000) * 1_000);
        }

        @Override
        public long expireAfterUpdate(Key key, Denial denial, long currentTime, long currentDuration) {
            return expireAfterCreate(key, denial, currentTime);
        }

        @Override
        public long expireAfterRead(Key key, Denial denial, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }
}
