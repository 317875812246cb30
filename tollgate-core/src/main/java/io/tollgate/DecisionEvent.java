package io.tollgate;

import java.util.Objects;

/**
 * One decision a limiter returned, or one charge it took, as its {@linkplain DecisionListener listeners} are told
 * of it: the key, the policy, the cost, what came of it and where the answer came from.
 *
 * <p>Immutable and thread-safe.
 *
 * @param key the client key, as the caller gave it
 * @param policy the policy it was decided under
 * @param cost the tokens asked for (or charged)
 * @param outcome what came of it
 * @param source where the answer came from: {@value #MEMORY} for a limiter in this process's memory, the store's
 *     name in lower case ({@code redis}), {@value #FALLBACK} for the failure policy's decision while the store could
 *     not decide, {@value #DENY_CACHE} for a refusal this instance remembered without asking the store, or
 *     {@value #LEASE} for an admission answered from tokens this instance took from the store ahead (a hot key's)
 */
public record DecisionEvent(String key, Policy policy, long cost, Outcome outcome, String source) {

    /** The source of a decision made by a limiter in this process's memory. */
    public static final String MEMORY = "memory";

    /** The source of a decision the failure policy made because the store could not. */
    public static final String FALLBACK = "fallback";

    /** The source of an admission answered from the tokens of a lease this instance held (a hot key's). */
    public static final String LEASE = "lease";

    /** The source of a refusal that the deny cache answered without asking the store. */
    public static final String DENY_CACHE = "deny_cache";

    /** What came of a request or a charge. */
    public enum Outcome {
        /** The request was allowed: its cost was taken. */
        ALLOWED,
        /** The request was refused: nothing was taken. */
        REFUSED,
        /**
         * A cost was charged whatever the buckets held ({@link RateLimiter#chargeAsync}), such as the tokens of a
         * response known after the fact.
         */
        CHARGED
    }

    /**
     * Checks the event.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the cost is below 1
     */
    public DecisionEvent {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(source, "source");
        if (cost < 1) {
            throw new IllegalArgumentException("cost must be at least 1, was " + cost);
        }
    }

    /** Returns whether the request was allowed, or charged: whether its cost was taken. */
    public boolean tookTokens() {
        return outcome != Outcome.REFUSED;
    }

    /**
     * Returns whether this is one of the decisions a warm-up makes ({@link RateLimiter#warmUp}, and the server's
     * and the starter's warm-ups of their request paths) on keys that no client can guess: a listener that counts
     * clients skips them.
     */
    public boolean warmUp() {
        return WarmUpKeys.isWarmUp(key);
    }
}
