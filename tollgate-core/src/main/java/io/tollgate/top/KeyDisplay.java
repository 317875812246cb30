package io.tollgate.top;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;

/**
 * How a report shows client keys, which can be secrets (API keys): whole, masked (what the key is, the first
 * characters of its value and a digest) or as digests only. The digest, the first 16 hexadecimal digits of the
 * key's SHA-256, is the same on every instance, so that a masked key can be told apart from another and looked
 * for elsewhere. Immutable.
 */
public enum KeyDisplay {
    /** The key as it is. */
    WHOLE,
    /** What the key is ({@code ip:}, {@code header:x-api-key:}), the first four characters of its value, a digest. */
    MASKED,
    /** Only the digest. */
    DIGEST;

    /** How many characters of a key's value {@link #MASKED} shows. */
    static final int SHOWN = 4;

    /**
     * Reads {@code whole}, {@code masked} or {@code digest}.
     *
     * @throws IllegalArgumentException naming the value and the known ones
     */
    public static KeyDisplay of(String text) {
        return switch (Objects.requireNonNull(text, "text").toLowerCase(Locale.ROOT)) {
            case "whole" -> WHOLE;
            case "masked" -> MASKED;
            case "digest" -> DIGEST;
            default -> throw new IllegalArgumentException("must be whole, masked or digest, was '" + text + "'");
        };
    }

    /** Returns {@code key} as this shows it. */
    public String show(String key) {
        return switch (this) {
            case WHOLE -> key;
            case DIGEST -> "sha256:" + digest(key);
            case MASKED -> {
                int kind = kindLength(key);
                String value = key.substring(kind);
                String shown = value.length() <= SHOWN ? "" : value.substring(0, SHOWN);
                yield key.substring(0, kind) + shown + "…" + digest(key);
            }
        };
    }

    /**
     * Returns the length of what a key is, before its value: {@code header:NAME:} and {@code query:NAME:} for those
     * sources, else up to the first colon ({@code ip:}, whose IPv6 value has colons of its own); none without one.
     */
    private static int kindLength(String key) {
        int first = key.indexOf(':');
        if (first < 0) {
            return 0;
        }
        String kind = key.substring(0, first);
        int second = key.indexOf(':', first + 1);
        return (kind.equals("header") || kind.equals("query")) && second > 0 ? second + 1 : first + 1;
    }

    /** Returns the first 16 hexadecimal digits of the SHA-256 of {@code key}'s UTF-8 bytes. */
    public static String digest(String key) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
