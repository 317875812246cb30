package io.tollgate.top;

/**
 * One of the keys that weighed most in a window: its estimated weight (requests refused, or tokens charged), at
 * most {@code count} and at least {@code count - error}.
 *
 * @param key the client key
 * @param count the estimate, never below the true weight
 * @param error how much the estimate may exceed the true weight
 */
public record TopKey(String key, long count, long error) {

    /** Returns the least the key can have weighed: {@code count - error}. */
    public long guaranteed() {
        return count - error;
    }
}
