package io.tollgate;

import java.util.Objects;

/**
 * Why a decision was not made by the store that normally makes it, and what was done instead.
 *
 * @param cause what went wrong
 * @param fallback the failure policy that decided instead
 * @param detail a short human-readable explanation, such as the store's error message
 */
public record Degradation(Cause cause, FailurePolicy fallback, String detail) {

    /** What kept the store from deciding. */
    public enum Cause {
        /** The store did not answer within the time budget. */
        TIMEOUT,
        /** The store could not be reached: refused, disconnected, not yet connected. */
        UNREACHABLE,
        /** The store answered with an error, such as OOM, READONLY, CLUSTERDOWN or WRONGTYPE. */
        ERROR_REPLY,
        /** Recent calls failed, so the circuit breaker did not call the store at all. */
        CIRCUIT_OPEN
    }

    /**
     * Validates the degradation.
     *
     * @throws NullPointerException if an argument is null
     */
    public Degradation {
        Objects.requireNonNull(cause, "cause");
        Objects.requireNonNull(fallback, "fallback");
        Objects.requireNonNull(detail, "detail");
    }

    /**
     * Returns whether the decision was refused because the store could not decide and the failure policy is
     * {@link FailurePolicy#DENY}: the client exceeded nothing, the limiter was unavailable.
     */
    public boolean failsClosed() {
        return fallback == FailurePolicy.DENY;
    }
}
