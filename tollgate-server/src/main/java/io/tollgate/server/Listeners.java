package io.tollgate.server;

import io.tollgate.server.internal.tls.TlsSettings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Where the server listens, and what its public port serves besides its role (proxying, or the decision API
 * without an upstream). Taken at a start only: a reload keeps them.
 *
 * @param host the address the public port binds
 * @param port the public port, 0 for a free one
 * @param tls the public port's TLS, or null for plain HTTP
 * @param management the management port, or null without one
 * @param decision the decision API's own port beside a proxy, or null without one
 * @param exposure what the public port serves that is not its role, as the file says
 */
record Listeners(
        String host,
        int port,
        TlsSettings tls,
        Management management,
        DecisionPort decision,
        PublicExposure exposure,
        Set<String> allowedHosts,
        Duration headTimeout,
        int maxConnections) {

    Listeners withPort(int otherPort) {
        return new Listeners(
                host, otherPort, tls, management, decision, exposure, allowedHosts, headTimeout, maxConnections);
    }

    /**
     * Whether a bind address serves this host only: {@code localhost} or a loopback literal ({@code 127.0.0.1},
     * {@code ::1}). Any other address, or a name, may be reached from elsewhere.
     */
    static boolean isThisHostOnly(String host) {
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (!host.matches("[0-9.]+") && !host.contains(":")) {
            return false; // a name: never looked up here
        }
        try {
            return InetAddress.getByName(host).isLoopbackAddress(); // a literal: parsed, not looked up
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** Whether a port's TLS makes every client show a certificate the file's authorities signed. */
    static boolean requiresCertificates(TlsSettings tls) {
        return tls != null && tls.clientAuth() == TlsSettings.ClientAuth.REQUIRED;
    }

    /**
     * The decision API's own listener beside a proxy ({@code server.decision-port}): the services that ask for
     * decisions reach it; the proxy's clients do not.
     *
     * @param port the port, 0 for a free one
     * @param host the address it binds
     * @param tls its TLS, or null for plain HTTP
     */
    record DecisionPort(int port, String host, TlsSettings tls) {}

    /**
     * What a proxy's public port serves besides proxying, each only where the file says so in a setting named
     * for it ({@code server.expose-decision-api-publicly}, {@code server.expose-health-publicly}, {@code
     * server.expose-metrics-publicly}); the server warns at its start for each. A decision server's public port
     * serves the decision API and health as its role, and metrics only where the file says so.
     *
     * @param decisionApi {@code /v1/check} and {@code /v1/charge} on a proxy's public port
     * @param health {@code /healthz} and {@code /readyz} on a proxy's public port
     * @param metrics {@code /metrics} on the public port
     */
    record PublicExposure(boolean decisionApi, boolean health, boolean metrics) {

        /** The public port serves its role alone. */
        static final PublicExposure NONE = new PublicExposure(false, false, false);

        /** Returns the settings that expose something, named as the file names them. */
        List<String> settings() {
            List<String> named = new ArrayList<>();
            if (decisionApi) {
                named.add("server.expose-decision-api-publicly");
            }
            if (health) {
                named.add("server.expose-health-publicly");
            }
            if (metrics) {
                named.add("server.expose-metrics-publicly");
            }
            return named;
        }
    }

    /**
     * The management port's listener.
     *
     * @param port the port, 0 for a free one
     * @param host the address it binds
     * @param token the bearer token every request must carry, or null for none
     * @param tls its TLS, or null for plain HTTP
     */
    record Management(int port, String host, String token, TlsSettings tls) {

        /** Whether anyone who reaches the port may use it: it binds beyond this host with no token and no certificates. */
        boolean unauthenticated() {
            return !isThisHostOnly(host) && token == null && !requiresCertificates(tls);
        }

        @Override
        public String toString() {
            return "Management[" + host + ":" + port + (token == null ? "" : ", token") + (tls == null ? "" : ", tls")
                    + "]"; // never the token
        }
    }
}
