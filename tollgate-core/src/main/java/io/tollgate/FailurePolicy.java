package io.tollgate;

/**
 * What a limiter backed by a store (such as Redis) answers when the store cannot decide in time: it is
 * down, hanging, too slow, or answering errors. The answer is a {@linkplain Decision#degraded() degraded}
 * decision, never an exception.
 */
public enum FailurePolicy {

    /** Fail open: allow the request. The API stays up; for a while nobody is limited. */
    ALLOW,

    /** Fail closed: refuse the request. Nobody gets through until the store is back. */
    DENY,

    /**
     * Decide with an in-memory limiter in this process, for the same policy, optionally scaled down by the
     * number of instances expected to share the load, so that each instance admits about its share.
     */
    LOCAL
}
