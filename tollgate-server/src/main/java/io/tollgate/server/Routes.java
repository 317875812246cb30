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
     * Returns the handler of {@code path} on the public port: {@code check}, {@code charge}, {@code health},
     * {@code metrics}, {@code forward-auth}, {@code proxy}, or {@code none}.
     *
     * @param exposure what the file exposes on the public port besides its role
     * @param proxy whether the server has an upstream
     * @param forwardAuth whether it answers {@value ForwardAuth#PATH} ({@code server.forward-auth})
     */
    static String publicRoute(String path, ServerConfig.PublicExposure exposure, boolean proxy, boolean forwardAuth) {
        if (forwardAuth && path.equals(ForwardAuth.PATH)) {
            return "forward-auth";
        }
        String own = switch (path) {
            case "/v1/check" -> !proxy || exposure.decisionApi() ? "check" : null;
            case "/v1/charge" -> !proxy || exposure.decisionApi() ? "charge" : null;
            case "/healthz", "/readyz" -> !proxy || exposure.health() ? "health" : null;
            case "/metrics" -> exposure.metrics() ? "metrics" : null;
            default -> null;
        };
        if (own != null) {
            return own;
        }
        return proxy ? "proxy" : "none";
    }

    /** Returns the handler of {@code path} on the decision port: {@code check}, {@code charge} or {@code none}. */
    static String decisionRoute(String path) {
        return switch (path) {
            case "/v1/check" -> "check";
            case "/v1/charge" -> "charge";
            default -> "none";
        };
    }

    /**
     * Returns the handler of {@code path} on the management port: {@code health}, {@code metrics}, {@code admin},
     * {@code page} (the live page and its files, which need no token) or {@code none}.
     */
    static String managementRoute(String path) {
        return switch (path) {
            case "/healthz", "/readyz" -> "health";
            case "/metrics" -> "metrics";
            default -> AdminApi.serves(path) ? "admin" : ManagementPage.serves(path) ? "page" : "none";
        };
    }

    /** The detail of a 404 for {@code path} on a port of role {@code port}, saying which endpoints there are. */
    static String noSuchEndpoint(String path, Port port, ServerConfig.PublicExposure exposure) {
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
