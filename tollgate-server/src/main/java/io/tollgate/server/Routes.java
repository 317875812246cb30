package io.tollgate.server;

/**
 * Which endpoint answers a path on each of the server's ports. Each port serves its role and what the file
 * exposes there by name, nothing else:
 *
 * <ul>
 *   <li>the public port of a proxy forwards every path to the upstream; the decision API, health and metrics
 *       answer there only where {@code server.expose-decision-api-publicly}, {@code
 *       server.expose-health-publicly} or {@code server.expose-metrics-publicly} says so;
 *   <li>the public port of a decision server (no upstream) serves {@code /v1/check}, {@code /v1/charge}, {@code
 *       /healthz} and {@code /readyz}, and {@code /metrics} only where {@code server.expose-metrics-publicly} says
 *       so;
 *   <li>the decision port ({@code server.decision-port}, beside a proxy) serves {@code /v1/check} and {@code
 *       /v1/charge};
 *   <li>the management port serves health, metrics, the admin API and the live page.
 * </ul>
 *
 * {@value ForwardAuth#PATH} answers on the public port where {@code server.forward-auth} says so. Stateless.
 */
final class Routes {

    /** The roles of the server's HTTP ports. */
    enum Port {
        /** What clients reach: the proxy, or the decision API of a server without an upstream. */
        PUBLIC,
        /** The decision API beside a proxy, for the services that ask for decisions. */
        DECISION,
        /** Health, metrics, the admin API and the live page, for operators and their tools. */
        MANAGEMENT
    }

    private Routes() {}

    /**
     * Returns the route of {@code path} on the public port: {@link Route#CHECK}, {@link Route#CHARGE}, {@link
     * Route#HEALTH}, {@link Route#METRICS}, {@link Route#FORWARD_AUTH}, {@link Route#PROXY} or {@link Route#NONE}.
     *
     * @param exposure what the file exposes on the public port besides its role
     * @param proxy whether the server has an upstream
     * @param forwardAuth whether it answers {@value ForwardAuth#PATH} ({@code server.forward-auth})
     */
    static Route publicRoute(String path, Listeners.PublicExposure exposure, boolean proxy, boolean forwardAuth) {
        if (forwardAuth && path.equals(ForwardAuth.PATH)) {
            return Route.FORWARD_AUTH;
        }
        Route own = switch (path) {
            case "/v1/check" -> !proxy || exposure.decisionApi() ? Route.CHECK : null;
            case "/v1/charge" -> !proxy || exposure.decisionApi() ? Route.CHARGE : null;
            case "/healthz", "/readyz" -> !proxy || exposure.health() ? Route.HEALTH : null;
            case "/metrics" -> exposure.metrics() ? Route.METRICS : null;
            default -> null;
        };
        if (own != null) {
            return own;
        }
        return proxy ? Route.PROXY : Route.NONE;
    }

    /** Returns the route of {@code path} on the decision port: {@link Route#CHECK}, {@link Route#CHARGE} or none. */
    static Route decisionRoute(String path) {
        return switch (path) {
            case "/v1/check" -> Route.CHECK;
            case "/v1/charge" -> Route.CHARGE;
            default -> Route.NONE;
        };
    }

    /**
     * Returns the route of {@code path} on the management port: {@link Route#HEALTH}, {@link Route#METRICS}, {@link
     * Route#ADMIN}, {@link Route#PAGE} (the live page and its files, which need no token) or {@link Route#NONE}.
     */
    static Route managementRoute(String path) {
        return switch (path) {
            case "/healthz", "/readyz" -> Route.HEALTH;
            case "/metrics" -> Route.METRICS;
            default -> AdminApi.serves(path) ? Route.ADMIN : ManagementPage.serves(path) ? Route.PAGE : Route.NONE;
        };
    }

    /** The detail of a 404 for {@code path} on a port of role {@code port}, saying which endpoints there are. */
    static String noSuchEndpoint(String path, Port port, Listeners.PublicExposure exposure) {
        return switch (port) {
            case MANAGEMENT ->
                "No such endpoint on the management port: " + path + ". Its endpoints are / (the live page),"
                        + " /healthz, /readyz, /metrics, " + AdminApi.POLICIES + ", " + AdminApi.RELOAD + ", "
                        + AdminApi.TOP + ", " + AdminApi.RATES + ", " + AdminApi.STORE + " and " + AdminApi.BUCKETS
                        + "{policy}/{key}.";
            case DECISION ->
                "No such endpoint on the decision port: " + path + ". Its endpoints are /v1/check and /v1/charge.";
            case PUBLIC ->
                "No such endpoint: " + path + ". This server has no upstream; its endpoints are /v1/check,"
                        + " /v1/charge, /healthz, /readyz"
                        + (exposure.metrics()
                                ? " and /metrics."
                                : "; metrics and the admin API are on the management port (server.management-port).");
        };
    }
}
