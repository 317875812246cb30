package io.tollgate.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Names the Redis key of a bucket: {@code PREFIX + policy + ":" + client key}, as UTF-8 bytes.
 *
 * <p>Redis keys are binary-safe, so a client key of any characters is used as it is, with two exceptions
 * that are replaced by {@code "#" + base64url(SHA-256)} of the key's UTF-16 code units: a key longer than
 * {@value #MAX_RAW_BYTES} bytes in UTF-8 (so a client cannot make Redis store megabytes per bucket), and a
 * key that UTF-8 cannot represent exactly (a lone surrogate would otherwise collide with {@code '?'}). A
 * raw key that itself starts with {@code '#'} is hashed too, so the two forms never collide.
 */
final class BucketKeys {

    static final int MAX_RAW_BYTES = 256;

    private final byte[] prefix;

    BucketKeys(String prefix) {
        this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    }

    byte[] key(String policy, String clientKey) {
        byte[] policyBytes = policy.getBytes(StandardCharsets.US_ASCII); // policy and limit names are ASCII
        byte[] client = encode(clientKey);
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
     * Returns the pub/sub channel of changes made to buckets outside a request: {@code PREFIX + "changes"}, so
     * that limiters with different prefixes on one Redis do not hear each other ({@link BucketChanges}).
     */
    byte[] changesChannel() {
        return (new String(prefix, StandardCharsets.UTF_8) + "changes").getBytes(StandardCharsets.UTF_8);
    }

    static byte[] encode(String clientKey) {
        if (clientKey.length() <= MAX_RAW_BYTES && clientKey.charAt(0) != '#' && !hasLoneSurrogate(clientKey)) {
            byte[] utf8 = clientKey.getBytes(StandardCharsets.UTF_8);
            if (utf8.length <= MAX_RAW_BYTES) {
                return utf8;
            }
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

    private static boolean hasLoneSurrogate(String s) {
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
