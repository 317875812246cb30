package io.tollgate.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * What the exchanges of every connection of one port answer with, and count on.
 *
 * @param managementPort whether the server has a management port (the public port then serves the decision
 *     API or the proxy alone)
 * @param blocking where work that may block runs (a metrics scrape, the admin API), never on a loop
 * @param upstreams the proxy's upstream connections, or null without an upstream
 * @param admin on the management port, its admin API; null on the public port
 * @param token on the management port, the bearer token it requires, or null
 */
record Endpoints(
        Supplier<Limits> limits,
        Readiness readiness,
        ServerMetrics metrics,
        boolean managementPort,
        Executor blocking,
        UpstreamConnections upstreams,
        AdminApi admin,
        byte[] token) {

    /** The public port's endpoints. */
    static Endpoints publicPort(
            Supplier<Limits> limits,
            Readiness readiness,
            ServerMetrics metrics,
            boolean managementPort,
            Executor blocking,
            UpstreamConnections upstreams) {
        return new Endpoints(limits, readiness, metrics, managementPort, blocking, upstreams, null, null);
    }

    /** The management port's endpoints: health, metrics and the admin API, behind {@code token} if set. */
    static Endpoints managementPort(
            Readiness readiness, ServerMetrics metrics, Executor blocking, AdminApi admin, String token) {
        return new Endpoints(
                null,
                readiness,
                metrics,
                true,
                blocking,
                null,
                Objects.requireNonNull(admin, "admin"),
                token == null ? null : token.getBytes(StandardCharsets.US_ASCII));
    }

    boolean isManagementPort() {
        return admin != null;
    }

    /**
     * Whether {@code request} may be answered: this port requires no token, or it carries the token in {@code
     * Authorization: Bearer}; compared in constant time.
     */
    boolean authorizes(HttpRequest request) {
        if (token == null) {
            return true;
        }
        String header = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        byte[] sent = header.substring(7).trim().getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(sent, token);
    }
}
