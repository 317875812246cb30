package io.tollgate.internal;

import io.tollgate.RateLimiter;
import java.util.UUID;

/**
 * The keys that a warm-up ({@link RateLimiter#warmUp}, and the warm-ups of the layers above it) decides on. They
 * start with a prefix drawn at random once per JVM, that no client can guess, so that every layer can tell a
 * warm-up's decision from a client's by its key alone and leave it out of what operators watch: the metrics
 * count it only in {@code tollgate.warm_up.decisions}, and the log of degraded decisions never names it. A
 * policy needs no name of its own for that: a warm-up may decide on a real policy (the server primes the
 * policies of its Envoy files) and still leave no trace under its name.
 *
 * <p>For the modules of Tollgate; no compatibility promise.
 */
public final class WarmUpKeys {

    /** What every warm-up key starts with: {@code tollgate-warm-up-}, a random UUID, and {@code -}. */
    public static final String PREFIX = "tollgate-warm-up-" + UUID.randomUUID() + "-";

    private WarmUpKeys() {}

    /** Returns the warm-up key ending in {@code suffix}. */
    public static String key(Object suffix) {
        return PREFIX + suffix;
    }

    /** Whether {@code key} is a warm-up's, not a client's. */
    public static boolean isWarmUp(String key) {
        return key.startsWith(PREFIX);
    }
}
