package io.tollgate;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;

/**
 * The argument checks that every {@link RateLimiter} applies before it decides anything, so that all
 * backends reject the same calls with the same messages. For implementations of {@code RateLimiter};
 * applications have no need of it.
 */
public final class LimiterArguments {

    /**
     * The longest key kept as it is, in characters: longer keys are replaced by their digest ({@link
     * #boundedKey}), in memory, on Redis and at the server's APIs alike.
     */
    public static final int MAX_KEY_LENGTH = 256;

    private LimiterArguments() {}

    /**
     * Checks one request: a non-empty key, a policy, and a cost that the policy could ever admit.
     *
     * @throws NullPointerException if key or policy is null
     * @throws IllegalArgumentException if the key is empty or the cost is out of range for the policy
     */
    public static void checkRequest(String key, Policy policy, long cost) {
        checkKey(key, policy);
        policy.checkCost(cost);
    }

    private static void checkKey(String key, Policy policy) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(policy, "policy");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
    }

    /**
     * Checks a permit's key and limit: a non-empty key and a limit.
     *
     * @throws NullPointerException if key or limit is null
     * @throws IllegalArgumentException if the key is empty
     */
    public static void checkPermit(String key, ConcurrencyLimit limit) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(limit, "limit");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
    }

    /**
     * Checks a charge made after the fact ({@code RateLimiter.chargeAsync}): a key, and a cost of at least 1
     * whose debt, charged to a full bucket, stays within what {@link TokenBucket} counts exactly (2^53
     * ticks). Unlike a request's, it may exceed the capacity.
     *
     * @throws IllegalArgumentException if the key is empty or the cost is out of range, naming the largest
     * @throws NullPointerException if the key or policy is null
     */
    public static void checkCharge(String key, Policy policy, long cost) {
        checkKey(key, policy);
        if (cost < 1) {
            throw new IllegalArgumentException("cost must be at least 1, was " + cost);
        }
        long most = Long.MAX_VALUE;
        for (Limit limit : policy.limits()) {
            most = Math.min(
                    most,
                    (TokenBucket.MAX_TICKS - limit.fillTicks()) / limit.refill().ticksPerToken());
        }
        if (cost > most) {
            throw new IllegalArgumentException("cost " + cost + " exceeds the largest charge policy '" + policy.name()
                    + "' can count exactly (" + most + ")");
        }
    }

    /**
     * Returns the key a limiter keeps a bucket under, the one key rule of every store and surface: {@code key}
     * itself if it has at most {@value #MAX_KEY_LENGTH} characters (UTF-16 code units, as {@link
     * String#length()} counts them), else {@code sha256:} and the URL-safe Base64 of the SHA-256 digest of its
     * UTF-8 form (of its UTF-16 code units, big-endian, if it holds a lone surrogate, which UTF-8 cannot
     * represent), so that no client can make a bucket cost kilobytes (an absurd API key, a long composite) and
     * different keys still get different buckets. The in-memory limiter applies it at its edge, Redis before it
     * encodes the key for Redis, and HTTP enforcement reports keys as it says.
     */
    public static String boundedKey(String key) {
        if (key.length() <= MAX_KEY_LENGTH) {
            return key;
        }
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            if (hasLoneSurrogate(key)) {
                for (int i = 0; i < key.length(); i++) {
                    char c = key.charAt(i);
                    sha256.update((byte) (c >>> 8));
                    sha256.update((byte) c);
                }
            } else {
                sha256.update(key.getBytes(StandardCharsets.UTF_8));
            }
            return "sha256:" + Base64.getUrlEncoder().withoutPadding().encodeToString(sha256.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** Whether a string holds a surrogate that is not half of a pair, which UTF-8 cannot represent. */
    public static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Returns the maximum wait of a caller of {@code acquire} in whole microseconds, at most {@code 2^53 - 1}: no
     * bucket's wait is longer (its debt stays within what exact arithmetic counts), and a wait of {@code 2^53}
     * or more marks a charge that must land ({@link TokenBucket#mustLand}), which a reservation is not.
     *
     * @throws NullPointerException if maxWait is null
     * @throws IllegalArgumentException if maxWait is negative
     */
    public static long acquireWaitMicros(Duration maxWait) {
        return Math.min(maxWaitMicros(maxWait), TokenBucket.MAX_TICKS - 1);
    }

    /**
     * Returns a caller's maximum wait in whole microseconds, saturating at {@link Long#MAX_VALUE}.
     *
     * @throws NullPointerException if maxWait is null
     * @throws IllegalArgumentException if maxWait is negative
     */
    public static long maxWaitMicros(Duration maxWait) {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + maxWait);
        }
        long seconds = maxWait.getSeconds();
        return seconds >= Long.MAX_VALUE / 1_000_000 - 1
                ? Long.MAX_VALUE
                : seconds * 1_000_000 + maxWait.getNano() / 1_000;
    }
}
