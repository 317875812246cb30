package io.tollgate.guard;

import io.tollgate.Degradation;
import java.util.Objects;

/**
 * Why a store failed to decide, sorted by what the guard does about it.
 *
 * @param cause what kept the store from deciding
 * @param detail a message naming the key and the error, for logs and degraded decisions
 * @param storeFault whether the store itself is at fault (counted by the circuit breaker), rather than the
 *     value of one key (a key of another type, or someone else's string)
 */
public record StoreFailure(Degradation.Cause cause, String detail, boolean storeFault) {

    /** @throws NullPointerException if cause or detail is null */
    public StoreFailure {
        Objects.requireNonNull(cause, "cause");
        Objects.requireNonNull(detail, "detail");
    }
}
