package io.tollgate.server;

import io.tollgate.config.ConfigNode;
import io.tollgate.server.internal.access.Callers;
import io.tollgate.server.internal.tls.TlsSettings;
import java.util.ArrayList;
import java.util.List;

/**
 * The rule for the ports that can change another client's buckets (the decision API's, the management port, Envoy's):
 * each binds this host only, or asks its callers who they are (callers' tokens or certificates, the management
 * token, client certificates). A file that opens one wider without that stops the start, naming the ways out, unless
 * a setting whose name says what it opens allows it; then every start warns. Stateless.
 */
final class OpenPorts {

    private OpenPorts() {}

    /**
     * Checks the file's ports against the rule; the management port's own check is where it is read.
     *
     * @throws io.tollgate.config.ConfigException naming the setting that opens a port
     */
    static void check(ConfigNode root, Listeners listeners, EnvoyListener envoy, Callers callers, boolean proxy) {
        ConfigNode server = root.child("server");
        ConfigNode envoyNode = root.child("envoy");
        if (envoy != null
                && envoy.reachableWithoutCertificates()
                && !callers.required()
                && !envoyNode.child("allow-unauthenticated-callers").bool(false)) {
            throw envoyNode
                    .child("host")
                    .error("binds " + envoy.host() + ", so anyone who reaches the port can spend any client's buckets:"
                            + " name callers, require client certificates (envoy.tls with client-ca), bind 127.0.0.1,"
                            + " or set envoy.allow-unauthenticated-callers: true");
        }
        if (!server.child("allow-unauthenticated-decisions").bool(false)) {
            if (!proxy && open(listeners.host(), listeners.tls(), callers)) {
                throw server.child("host").error(decisions(listeners.host()));
            }
            Listeners.DecisionPort decision = listeners.decision();
            if (decision != null && open(decision.host(), decision.tls(), callers)) {
                throw server.child("decision-host").error(decisions(decision.host()));
            }
        }
        if (listeners.exposure().decisionApi() && !callers.required()) {
            throw server.child("expose-decision-api-publicly")
                    .error("serves the decision API to every client of the proxy, so it needs callers: name them,"
                            + " with their tokens or certificates, in callers");
        }
    }

    /**
     * Returns the warnings of every start for the ports a setting opened to unauthenticated callers on purpose, where
     * they listen ({@code management}, {@code envoy}: their addresses, or null without them).
     */
    static List<String> warnings(ServerConfig config, String management, String envoy) {
        List<String> warnings = new ArrayList<>();
        Listeners listeners = config.listeners();
        if (config.upstream() == null && open(listeners.host(), listeners.tls(), config.callers())) {
            warnings.add(decisionsWarning(listeners.host() + ":" + config.port()));
        }
        Listeners.DecisionPort decision = listeners.decision();
        if (decision != null && open(decision.host(), decision.tls(), config.callers())) {
            warnings.add(decisionsWarning(decision.host() + ":" + decision.port()));
        }
        if (config.management() != null && config.management().unauthenticated()) {
            warnings.add("tollgate: server.management-allow-unauthenticated is on: anyone who reaches " + management
                    + " may reset buckets and reload the configuration; set server.management-token");
        }
        if (envoyUnauthenticated(config)) {
            warnings.add("tollgate: envoy.allow-unauthenticated-callers is on: anyone who reaches " + envoy
                    + " may spend any client's buckets; require client certificates with envoy.tls");
        }
        return warnings;
    }

    /** Whether anyone who reaches Envoy's port may call it: beyond this host, asking no certificate nor token. */
    static boolean envoyUnauthenticated(ServerConfig config) {
        return config.envoy() != null
                && config.envoy().reachableWithoutCertificates()
                && !config.callers().required();
    }

    /** Whether a port of the decision API that binds {@code host} is open to anyone who reaches it. */
    private static boolean open(String host, TlsSettings tls, Callers callers) {
        return !Listeners.isThisHostOnly(host) && !Listeners.requiresCertificates(tls) && !callers.required();
    }

    private static String decisions(String host) {
        return "binds " + host + " and serves the decision API, so anyone who reaches the port can spend any client's"
                + " buckets: name callers, require client certificates, bind 127.0.0.1, or set"
                + " server.allow-unauthenticated-decisions: true";
    }

    private static String decisionsWarning(String address) {
        return "tollgate: server.allow-unauthenticated-decisions is on: anyone who reaches " + address
                + " may spend any client's buckets; name callers";
    }
}
