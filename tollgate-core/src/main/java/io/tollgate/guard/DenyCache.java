package io.tollgate.guard;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.TimeSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Remembers refusals, so that a client hammering an empty bucket is refused locally instead of costing a
 * call to the store per request.
 *
 * <p>When the store refuses a request of cost {@code c} with retry-after {@code T}, no request of cost {@code
 * c} can pass before {@code T} has elapsed: other instances can only take tokens from the bucket, never add
 * them. So until then requests of that cost are refused here, with the retry-after that the store would give,
 * and requests of any other cost still go to the store. {@code T} is counted from when the request was sent,
 * before the store decided, so a local refusal never outlasts the real one. Like any decision's, the retry-after
 * given assumes that nobody else takes tokens meanwhile; if other instances do, the real one is longer.
 *
 * <p><b>Ceiling.</b> Another instance may give tokens back or reset the bucket: it announces that through the
 * store, and this instance then forgets the refusal ({@link #forget}), or, if it may have missed announcements,
 * every refusal ({@link #clear}). So that an announcement lost on its way costs a bounded time, no refusal is
 * relied on longer than {@code maxAgeMicros} after its request was sent: past that, the next request asks the
 * store again (one request, as below, while the others wait for it), and the refusal it brings back is
 * remembered afresh. The retry-after given is the store's, whatever the ceiling.
 *
 * <p>A key refused recently stays known for a second after its refusal ends. While one request for such a
 * key asks the store again (the <em>probe</em>), the others wait for its answer and then decide again, so that
 * the many threads of a server flooded by one client do not all call the store each time a token comes due. A
 * probe that finds tokens left for the next request ends the coordination: the key is forgotten, and its requests
 * ask the store together, as for any key.
 *
 * <p>Bounded. Thread-safe.
 */
final class DenyCache {

    /** How long a key stays known after its refusal ends, so that probes for it are coordinated. */
    private static final long REMEMBERED_MICROS = 1_000_000;

    private record Key(String policy, String key) {}

    /**
     * A refusal remembered: it lasts until {@code untilMicros}, and is relied on until {@code trustedUntilMicros},
     * no later.
     */
    private record Denial(
            Policy policy, long cost, long untilMicros, long sentMicros, Decision decision, long trustedUntilMicros) {}

    /**
     * What to do with a request: refuse it here ({@code refusal}), wait for the probe in flight and then
     * decide again ({@code probe}), or ask the store, as the probe if {@code probing} (then call {@link
     * #probed}).
     */
    record Lookup(Decision refusal, CompletableFuture<Void> probe, boolean probing) {}

    private static final Lookup ASK_REDIS = new Lookup(null, null, false);

    private final Cache<Key, Denial> denials;
    private final ConcurrentMap<Key, CompletableFuture<Void>> probes = new ConcurrentHashMap<>();
    private final long maxAgeMicros;

    /**
     * @param maximumKeys how many refused keys to remember
     * @param maxAgeMicros how long after its request was sent a refusal is relied on at most
     */
    DenyCache(long maximumKeys, long maxAgeMicros, TimeSource time) {
        this.maxAgeMicros = maxAgeMicros;
        this.denials = Caffeine.newBuilder()
                .maximumSize(maximumKeys)
                .ticker(() -> time.nowMicros() * 1_000)
                .executor(Runnable::run)
                .expireAfter(new ForgetAt<Key, Denial>(denial -> denial.untilMicros + REMEMBERED_MICROS))
                .build();
    }

    /** Decides what to do with a request of {@code cost} at {@code nowMicros}. */
    Lookup lookup(Policy policy, String key, long cost, long nowMicros) {
        Key cacheKey = new Key(policy.name(), key);
        Denial denial = denials.getIfPresent(cacheKey);
        if (denial == null) {
            return ASK_REDIS;
        }
        Decision refusal = refusal(denial, policy, cost, nowMicros);
        if (refusal != null) {
            return new Lookup(refusal, null, false);
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> inFlight = probes.putIfAbsent(cacheKey, mine);
        return inFlight == null ? new Lookup(null, mine, true) : new Lookup(null, inFlight, false);
    }

    /** Returns the microseconds until a remembered refusal of this cost ends; 0 if there is none. */
    long refusedForMicros(Policy policy, String key, long cost, long nowMicros) {
        Denial denial = denials.getIfPresent(new Key(policy.name(), key));
        Decision refusal = denial == null ? null : refusal(denial, policy, cost, nowMicros);
        return refusal == null ? 0 : refusal.retryAfterMicros();
    }

    /**
     * Takes note of what the store would answer the next request of {@code cost} after the one sent at {@code
     * sentMicros}, if nobody else took tokens meanwhile: its answer if it refused (the bucket is unchanged); if
     * it admitted, the answer to the same request against the bucket it left. A refusal is remembered; anything
     * else forgets the key: its bucket has tokens for the next request, so the requests waiting for this answer, and
     * the next ones, ask the store together (in one batch) rather than one probe at a time, which would admit no more
     * than one request per round trip of a key whose bucket refills faster than that.
     */
    void update(Policy policy, String key, long cost, long sentMicros, Decision answer) {
        Key cacheKey = new Key(policy.name(), key);
        boolean refused = !answer.allowed() && answer.retryAfterMicros() > 0;
        if (refused) {
            long until = sentMicros + answer.retryAfterMicros();
            long trustedUntil = sentMicros + Math.min(answer.retryAfterMicros(), maxAgeMicros);
            denials.put(cacheKey, new Denial(policy, cost, until, sentMicros, answer, trustedUntil));
        } else {
            denials.invalidate(cacheKey);
        }
    }

    /**
     * Ends any remembered refusal of the key as of {@code sentMicros}: tokens were given back to its bucket
     * then, so the refusal may end sooner than the store said, or taken after the fact, so it may last longer
     * than the store said; either way the next request asks the store, and its answer is remembered instead.
     */
    void bucketChanged(Policy policy, String key, long sentMicros) {
        denials.asMap()
                .computeIfPresent(
                        new Key(policy.name(), key),
                        (k, denial) -> new Denial(
                                denial.policy,
                                denial.cost,
                                Math.min(denial.untilMicros, sentMicros),
                                denial.sentMicros,
                                denial.decision,
                                Math.min(denial.trustedUntilMicros, sentMicros)));
    }

    /** Forgets any refusal of the key, whose bucket was reset or given tokens back, here or elsewhere. */
    void forget(String policyName, String key) {
        denials.invalidate(new Key(policyName, key));
    }

    /** Forgets every refusal: announcements of changes may have been missed. */
    void clear() {
        denials.invalidateAll();
    }

    /** Ends a probe that {@link #lookup} started, whatever its outcome, and wakes the requests waiting on it. */
    void probed(Policy policy, String key, CompletableFuture<Void> probe) {
        probes.remove(new Key(policy.name(), key), probe);
        probe.complete(null);
    }

    /**
     * Returns the refusal that a remembered denial gives a request of {@code cost} at {@code nowMicros}, or
     * null: what the store would answer now, with retry-after and reset-after counted down and the tokens
     * regained meanwhile (whole tokens only, still fewer than the cost).
     */
    private static Decision refusal(Denial denial, Policy policy, long cost, long nowMicros) {
        if (cost != denial.cost
                || nowMicros >= denial.untilMicros
                || nowMicros >= denial.trustedUntilMicros
                || !denial.policy.equals(policy)) {
            return null;
        }
        Decision refused = denial.decision;
        long elapsed = Math.max(0, nowMicros - denial.sentMicros);
        long reset = Math.max(0, refused.resetAfterMicros() - elapsed);
        // a calendar quota regains nothing before its period ends, when the denial ends too
        long remaining = refused.limitIndex() >= policy.limits().size()
                ? refused.remaining()
                : remaining(refused.limit(), cost, reset);
        if (remaining < 0) {
            return null; // cannot be told exactly here: ask the store
        }
        return new Decision(
                false, refused.limit(), refused.limitIndex(), remaining, denial.untilMicros - nowMicros, reset);
    }

    /**
     * Returns the whole tokens of a refused limit that is full again in {@code resetMicros}, or -1 if that
     * cannot be told exactly: while a request of {@code cost} is refused the bucket holds fewer than {@code
     * cost} tokens, so for a cost of 1 that is 0; otherwise, when a tick is a microsecond, the bucket's debt
     * is exactly its reset-after.
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
}
