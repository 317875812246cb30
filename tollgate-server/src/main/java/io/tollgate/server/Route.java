package io.tollgate.server;

/**
 * What answers a request on one of the server's ports, as {@link Routes} picks it from the path and the port's
 * role. Each route's name is the {@code handler} tag of the meter {@code tollgate.server.requests}.
 */
enum Route {
    /** {@code /v1/check}: the decision API's decisions. */
    CHECK("check"),
    /** {@code /v1/charge}: the decision API's charges after the fact. */
    CHARGE("charge"),
    /** {@code /healthz} and {@code /readyz}. */
    HEALTH("health"),
    /** {@code /metrics}, in Prometheus's text format. */
    METRICS("metrics"),
    /** The forward-auth endpoint of a reverse proxy in front ({@code server.forward-auth}). */
    FORWARD_AUTH("forward-auth"),
    /** Any path of a proxy's public port that the server does not answer itself: forwarded upstream. */
    PROXY("proxy"),
    /** The admin API on the management port. */
    ADMIN("admin"),
    /** The live page and its files on the management port, which need no token. */
    PAGE("page"),
    /** No endpoint: answered 404, saying which there are. */
    NONE("none"),
    /** A request that could not be read, which no meter counts. */
    BAD_REQUEST("bad-request");

    private final String meterName;

    Route(String meterName) {
        this.meterName = meterName;
    }

    /** Returns the route's {@code handler} tag on {@code tollgate.server.requests}, such as {@code check}. */
    String meterName() {
        return meterName;
    }

    /** Whether this is the decision API, whose callers are named where the file names callers. */
    boolean decisionApi() {
        return this == CHECK || this == CHARGE;
    }

    /** Whether the management port's token guards this route: every route but the live page's. */
    boolean guarded() {
        return this != PAGE;
    }

    /** Whether the meter of requests counts this route's answers. */
    boolean metered() {
        return this != BAD_REQUEST;
    }
}
