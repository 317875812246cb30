package io.tollgate.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.tollgate.http.NormalPath;
import io.tollgate.server.internal.access.CallerEvents;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * What the exchanges of every connection of one port answer with, and count on.
 *
 * @param port the port's role, which decides what it serves ({@link Routes})
 * @param exposure what the file exposes on the public port besides its role
 * @param blocking where work that may block runs (a metrics scrape, the admin API), never on a loop
 * @param upstreams the proxy's upstream connections on the public port of a proxy, else null
 * @param admin on the management port, its admin API; null on the others
 * @param token on the management port, the bearer token it requires, or null
 * @param hostNames the names besides {@code localhost} that a request to this host's own endpoints may give in
 *     {@code Host} ({@code server.allowed-hosts}), lower-case
 */
record Endpoints(
        Routes.Port port,
        Supplier<Limits> limits,
        Readiness readiness,
        ServerMetrics metrics,
        Listeners.PublicExposure exposure,
        Executor blocking,
        UpstreamConnections upstreams,
        AdminApi admin,
        byte[] token,
        Set<String> hostNames) {

    /** These endpoints, answering a {@code Host} of {@code names} too. */
    Endpoints withHostNames(Set<String> names) {
        return new Endpoints(
                port, limits, readiness, metrics, exposure, blocking, upstreams, admin, token, Set.copyOf(names));
    }

    /** The public port's endpoints. */
    static Endpoints publicPort(
            Supplier<Limits> limits,
            Readiness readiness,
            ServerMetrics metrics,
            Listeners.PublicExposure exposure,
            Executor blocking,
            UpstreamConnections upstreams) {
        return new Endpoints(
                Routes.Port.PUBLIC, limits, readiness, metrics, exposure, blocking, upstreams, null, null, Set.of());
    }

    /** The decision port's endpoints: the decision API alone. */
    static Endpoints decisionPort(
            Supplier<Limits> limits, Readiness readiness, ServerMetrics metrics, Executor blocking) {
        return new Endpoints(
                Routes.Port.DECISION,
                limits,
                readiness,
                metrics,
                Listeners.PublicExposure.NONE,
                blocking,
                null,
                null,
                null,
                Set.of());
    }

    /** The management port's endpoints: health, metrics and the admin API, behind {@code token} if set. */
    static Endpoints managementPort(
            Readiness readiness, ServerMetrics metrics, Executor blocking, AdminApi admin, String token) {
        return new Endpoints(
                Routes.Port.MANAGEMENT,
                null,
                readiness,
                metrics,
                Listeners.PublicExposure.NONE,
                blocking,
                null,
                Objects.requireNonNull(admin, "admin"),
                token == null ? null : token.getBytes(StandardCharsets.US_ASCII),
                Set.of());
    }

    boolean isManagementPort() {
        return port == Routes.Port.MANAGEMENT;
    }

    /** Returns where what callers of the decision API did is counted and logged. */
    CallerEvents callerEvents() {
        return metrics.callers();
    }

    /**
     * Returns the normal form of {@code target}'s path, which picks its route on the public and decision ports (so
     * that {@code //v1/check} is the decision API, not a path to forward) and is the path the proxy decides and
     * forwards; null on the management port, whose admin API reads its keys percent-encoded as sent, and for a path
     * the normal form refuses, which is routed as sent: to the proxy, which refuses it saying why, or to no endpoint.
     *
     * @throws IllegalArgumentException for a target that is not a path
     */
    NormalPath normalPath(String target) {
        String path = ExchangeAnswers.rawPath(target);
        if (isManagementPort()) {
            return null;
        }
        try {
            return NormalPath.parse(path, limits.get().answers().paths());
        } catch (IllegalArgumentException refused) {
            return null;
        }
    }

    /** Returns the route of {@code path} on this port ({@link Routes}). */
    Route route(String path) {
        return switch (port) {
            case MANAGEMENT -> Routes.managementRoute(path);
            case DECISION -> Routes.decisionRoute(path);
            case PUBLIC ->
                Routes.publicRoute(
                        path, exposure, upstreams != null, limits.get().config().forwardAuth());
        };
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
