package io.tollgate.testing;

/** An error reply from a test server, such as {@code ERR unknown command}. */
public final class RedisErrorReply extends RuntimeException {

    private static final long serialVersionUID = 1L;

    RedisErrorReply(String message) {
        super(message);
    }
}
