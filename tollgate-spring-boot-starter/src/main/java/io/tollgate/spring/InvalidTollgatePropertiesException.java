package io.tollgate.spring;

/**
 * A {@code tollgate.*} property, or a {@link RateLimit @RateLimit} annotation, that cannot work: the message
 * names the property or the method, and what is wrong with it. Thrown at startup, so that a bad
 * configuration never reaches a request.
 */
public final class InvalidTollgatePropertiesException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message that names the bad property or annotation. */
    public InvalidTollgatePropertiesException(String message, Throwable cause) {
        super(message, cause);
    }
}
