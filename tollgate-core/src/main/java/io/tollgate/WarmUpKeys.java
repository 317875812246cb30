package io.tollgate;

import java.util.UUID;

/**
 * The keys that a warm-up ({@link RateLimiter#warmUp}, and the warm-ups of the layers above it) decides on. They
 * start with a prefix drawn at random once per JVM, that no client can guess: no client's bucket is ever a
 * warm-up's, and the log of degraded decisions, which is not on a request's path, leaves them out by their key,
 * also where a warm-up decides on a real policy (the server primes the policies of its Envoy files). The
 * metrics do not look at keys: a per-request "is this the warm-up?" branch would be compiled for the warm-up
 * and thrown away on the first real request; what a warm-up recorded is removed once it is done
 * ({@code MicrometerMetrics.forgetWarmUp}).
 *
 * <p>For a limiter or a front door of one's own that warms up as Tollgate's do; applications have no need of it.
 */
public final class WarmUpKeys {

    /** What every warm-up key starts with: {@code tollgate-warm-up-}, a random UUID, and {@code -}. */
    public static final String PREFIX = "tollgate-warm-up-" + UUID.randomUUID() + "-";

    private WarmUpKeys() {}

    /** Returns the warm-up key ending in {@code suffix}. */
    public static String key(Object suffix) {
        return PREFIX + suffix;
    }

    /**
     * Whether {@code key} is a warm-up's, not a client's: it holds the prefix, at its start or after what a layer
     * above put before it (the server's decision API keeps its keys under {@code api:}). Shorter keys, nearly every
     * client's, are told apart by their length alone.
     */
    public static boolean isWarmUp(String key) {
        return key.length() >= PREFIX.length() && key.contains(PREFIX);
    }
}
