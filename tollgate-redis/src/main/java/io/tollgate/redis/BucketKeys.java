package io.tollgate.redis;

import io.tollgate.LimiterArguments;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Names the Redis key of a bucket: {@code PREFIX + policy + ":" + client key}, as UTF-8 bytes.
 *
 * <p>The client key is first bounded by the one key rule ({@link LimiterArguments#boundedKey}: over {@value
 * LimiterArguments#MAX_KEY_LENGTH} characters, {@code sha256:} and a digest), as the in-memory limiter bounds it, so
 * that a key names the same bucket in memory and on Redis. Redis keys are binary-safe, so the bounded key is
 * used as it is, with two exceptions that are replaced by {@code "#" + base64url(SHA-256)} of the key's UTF-16
 * code units: a key that UTF-8 cannot represent exactly (a lone surrogate would otherwise collide with {@code
 * '?'}), and a key that itself starts with {@code '#'}, so that the two forms never collide.
 */
final class BucketKeys {

    private final byte[] prefix;

    BucketKeys(String prefix) {
        this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    }

    byte[] key(String policy, String clientKey) {
        byte[] policyBytes = policy.getBytes(StandardCharsets.US_ASCII); // policy and limit names are ASCII
        byte[] client = encode(LimiterArguments.boundedKey(clientKey));
        byte[] key = new byte[prefix.length + policyBytes.length + 1 + client.length];
        System.arraycopy(prefix, 0, key, 0, prefix.length);
        System.arraycopy(policyBytes, 0, key, prefix.length, policyBytes.length);
        key[prefix.length + policyBytes.length] = ':';
        System.arraycopy(client, 0, key, prefix.length + policyBytes.length + 1, client.length);
        return key;
    }

    /**
     * Returns the key of a concurrency limit's slots: {@code PREFIX + "in-flight/" + limit + ":" + client
     * key}. A policy's name cannot hold {@code '/'}, so no bucket's key is ever the same.
     */
    byte[] inFlightKey(String limit, String clientKey) {
        return key("in-flight/" + limit, clientKey);
    }

    /**
     * Returns the key of the live instances' announcements: {@code PREFIX + "instances/live"}. A policy's name
     * cannot hold {@code '/'}, and a bucket's key holds a {@code ':'} after it, so no bucket's key is the same.
     */
    byte[] instancesKey() {
        return (new String(prefix, StandardCharsets.UTF_8) + "instances/live").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Returns the key of the summaries of who is limited that instances share: {@code PREFIX +
     * "top-keys/summaries"}, distinct from every bucket's key for the reason {@link #instancesKey()} gives.
     */
    byte[] summariesKey() {
        return (new String(prefix, StandardCharsets.UTF_8) + "top-keys/summaries").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Returns the pub/sub channel of changes made to buckets outside a request: {@code PREFIX + "changes"}, so
     * that limiters with different prefixes on one Redis do not hear each other ({@link BucketChanges}).
     */
    byte[] changesChannel() {
        return (new String(prefix, StandardCharsets.UTF_8) + "changes").getBytes(StandardCharsets.UTF_8);
    }

    /** A bounded client key's bytes in a Redis key: its UTF-8 form, or {@code #} and a digest (see above). */
    private static byte[] encode(String clientKey) {
        if (clientKey.charAt(0) != '#' && !LimiterArguments.hasLoneSurrogate(clientKey)) {
            return clientKey.getBytes(StandardCharsets.UTF_8);
        }
        return hashed(clientKey);
    }

    private static byte[] hashed(String clientKey) {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            for (int i = 0; i < clientKey.length(); i++) {
                char c = clientKey.charAt(i);
                sha256.update((byte) (c >>> 8));
                sha256.update((byte) c);
            }
            String digest = Base64.getUrlEncoder().withoutPadding().encodeToString(sha256.digest());
            return ("#" + digest).getBytes(StandardCharsets.US_ASCII);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** Returns a key as text for messages: printable, and cut short if long. */
    static String describe(byte[] key) {
        String text = new String(key, StandardCharsets.UTF_8);
        StringBuilder printable = new StringBuilder();
        for (int i = 0; i < text.length() && printable.length() < 120; i++) {
            char c = text.charAt(i);
            printable.append(Character.isISOControl(c) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return text.length() > 120 ? printable + "..." : printable.toString();
    }
}
