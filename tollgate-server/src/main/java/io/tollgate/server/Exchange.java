package io.tollgate.server;

import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.tollgate.http.NormalPath;
import io.tollgate.server.internal.access.Callers;
import java.io.ByteArrayOutputStream;
import java.util.List;

/** One request and its answer. */
final class Exchange {
    final HttpRequest request;
    final Route route;
    final String path;
    final long startNanos;
    boolean keepAlive;
    /** The decision API's body as read so far, or null when no body is wanted. */
    ByteArrayOutputStream body;
    /** Whether the body is thrown away after a 413, until its end, then the connection closed. */
    boolean lingering;
    /**
     * Whether the connection is closed gently after the answer: the request could not be read, and what the
     * client still sends is read and thrown away for a while, so that its unread bytes do not reset the
     * connection before it has read the answer.
     */
    boolean unreadable;

    long discarded;
    /** The path in normal form, as routing read it; null on the management port and for a path it refuses. */
    NormalPath normalPath;
    /** The bytes of a proxied request's body read so far. */
    long forwarded;

    boolean bodyDone;
    boolean answering;
    boolean answered;
    boolean ended;
    /** While a proxied request is decided: the body's chunks read meanwhile, else null. */
    List<HttpContent> early;
    /** The proxied request on its way once allowed, until the upstream's answer is done; else null. */
    ProxiedExchange proxy;
    /** For the decision API where the file names callers: the caller its token or certificate names; else null. */
    Callers.Caller caller;

    Exchange(HttpRequest request, Route route, String path, boolean keepAlive) {
        this.request = request;
        this.route = route;
        this.path = path;
        this.keepAlive = keepAlive;
        this.startNanos = System.nanoTime();
    }
}
