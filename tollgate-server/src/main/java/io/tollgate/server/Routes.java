package io.tollgate.server;

/**
 * Which endpoint answers a path. Without a management port: {@code /healthz}, {@code /readyz}, {@code /metrics},
 * {@code /v1/check} and {@code /v1/charge} are the server's own; everything else goes to the proxy, or, with no
 * upstream, is a 404. With one, the public port forwards every path to the upstream, or with no upstream serves
 * the decision API ({@code /v1/check}, {@code /v1/charge}) only; the management port serves {@code /healthz},
 * {@code /readyz}, {@code /metrics} and the admin API. Stateless.
 */
final class Routes {

    private Routes() {}

    /**
     * Returns the handler of {@code path} on the public port: {@code check}, {@code charge}, {@code health},
     * {@code metrics}, {@code forward-auth}, {@code proxy}, or {@code none}.
     *
     * @param managementPort whether the server has a management port
     * @param proxy whether the server has an upstream
     * @param forwardAuth whether it answers {@value ForwardAuth#PATH} ({@code server.forward-auth})
     */
    static String publicRoute(String path, boolean managementPort, boolean proxy, boolean forwardAuth) {
        if (forwardAuth && path.equals(ForwardAuth.PATH)) {
            return "forward-auth";
        }
        if (managementPort) {
            return proxy ? "proxy" : decisionApiRoute(path);
        }
        return switch (path) {
            case "/v1/check" -> "check";
            case "/v1/charge" -> "charge";
            case "/healthz", "/readyz" -> "health";
            case "/metrics" -> "metrics";
            default -> proxy ? "proxy" : "none";
        };
    }

    private static String decisionApiRoute(String path) {
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

    /** The detail of a 404 for {@code path}, saying which endpoints there are. */
    static String noSuchEndpoint(String path, boolean onManagementPort, boolean managementPort) {
        if (onManagementPort) {
            return "No such endpoint on the management port: " + path + ". Its endpoints are / (the live page),"
                    + " /healthz, /readyz, /metrics, " + AdminApi.POLICIES + ", " + AdminApi.RELOAD + ", "
                    + AdminApi.TOP + ", " + AdminApi.RATES + ", " + AdminApi.STORE + " and " + AdminApi.BUCKETS
                    + "{policy}/{key}.";
        }
        if (managementPort) {
            return "No such endpoint: " + path + ". This server has no upstream; its public endpoints are /v1/check"
                    + " and /v1/charge (health, metrics and the admin API are on the management port).";
        }
        return "No such endpoint: " + path + ". This server has no upstream; its endpoints are /v1/check,"
                + " /v1/charge, /healthz, /readyz and /metrics.";
    }
}
