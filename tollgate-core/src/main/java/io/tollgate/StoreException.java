package io.tollgate;

/**
 * The store behind a distributed {@link RateLimiter} (such as Redis) could not decide: it was unreachable,
 * did not answer in time, or answered with an error. The message names the store, the key and the cause.
 *
 * <p>Only failures of the store are reported this way; bad arguments still throw {@link
 * IllegalArgumentException}.
 */
public class StoreException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message that says what failed, and the failure beneath it. */
    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
