package io.tollgate.redis.internal;

/**
 * A script's answer that a key holds something else than a Tollgate bucket (a key of another type, or
 * another program's string): the scripts' reply code {@code -1}, and their message. It fails only the
 * requests for that key; Redis itself is fine.
 */
public final class NotABucketException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message the script's message, naming the key */
    public NotABucketException(String message) {
        super(message, null, false, false); // an answer, not a fault: no stack trace to fill in
    }
}
