package io.tollgate.server;

import io.tollgate.Policy;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import io.tollgate.http.ConfigSchema;
import io.tollgate.http.Rule;
import io.tollgate.http.RuleSections;
import io.tollgate.runtime.Stores;
import io.tollgate.server.internal.access.Callers;
import io.tollgate.server.internal.access.CallersSection;
import io.tollgate.server.internal.envoy.EnvoyRateLimits;
import io.tollgate.server.internal.envoy.EnvoyService;
import io.tollgate.server.internal.envoy.QuotaSettings;
import io.tollgate.server.internal.tls.TlsFiles;
import io.tollgate.server.internal.tls.TlsSettings;
import io.tollgate.spi.StoreSettings;
import io.tollgate.top.TopKeysSettings;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads the server's file into a {@link ServerConfig}: the sections it shares with a rules file (by {@link
 * RuleSections}), the stores ({@code redis} or {@code memory}), and the server's own ({@code server}, {@code envoy}),
 * each checked against its keys, and the settings that only make sense together. Stateless.
 */
final class ServerSections {

    /** A port's TLS. */
    private static final ConfigSection TLS =
            ConfigSection.of("tls", "certificate", "private-key", "client-ca", "client-auth");

    private static final ConfigSection ENVOY = ConfigSection.of(
                    "envoy",
                    "port",
                    "host",
                    "allow-unauthenticated-callers",
                    "config",
                    "x-ratelimit-headers",
                    "shadow-mode",
                    "merge-domains")
            .with("tls", TLS)
            .with("quota", QuotaSettings.SECTION);

    private static final ConfigSection SERVER = ConfigSection.of(
                    "server",
                    "host",
                    "port",
                    "shutdown-timeout",
                    "idle-timeout",
                    "upstream",
                    "upstream-timeout",
                    "max-body-size",
                    "management-port",
                    "management-host",
                    "management-token",
                    "management-allow-unauthenticated",
                    "allowed-hosts",
                    "allow-unauthenticated-decisions",
                    "request-head-timeout",
                    "max-connections",
                    "decision-port",
                    "decision-host",
                    "expose-decision-api-publicly",
                    "expose-health-publicly",
                    "expose-metrics-publicly",
                    "decision-api-shares-rule-keys",
                    "forward-auth",
                    "warm-up")
            .with("tls", TLS)
            .with("decision-tls", TLS)
            .with("management-tls", TLS);

    /** The server's file: what a rules file holds, the stores, and the server's own sections. */
    static final ConfigSection TOP = Stores.withSections(ConfigSchema.RULES
            .with("server", SERVER)
            .with("callers", CallersSection.CALLER)
            .with("envoy", ENVOY)
            .with("top-keys", TopKeysSettings.SCHEMA));

    /** Where the settings of the first server files went: one vocabulary, no aliases, an error that says where. */
    private static final Map<String, String> RENAMED = Map.of(
            "routes", "rules",
            "store", "redis (with failure-policy, expected-instances) or memory",
            "trusted-proxies", "client-ip.trusted-proxies",
            "upstream", "server.upstream",
            "upstream-timeout", "server.upstream-timeout");

    private ServerSections() {}

    /**
     * Reads the server's file.
     *
     * @throws ConfigException if a setting is invalid or unknown, naming it
     */
    static ServerConfig read(ConfigNode root) {
        root.checkKeys(TOP.keys(), RENAMED);
        ConfigNode server = root.child("server");
        server.checkKeys(SERVER);
        ConfigNode hostNode = server.child("host");
        ConfigNode portNode = server.child("port");
        int port = port(portNode, ServerConfig.DEFAULT_PORT);
        Duration shutdownTimeout = server.child("shutdown-timeout").duration(Duration.ofSeconds(10));
        Duration idleTimeout = server.child("idle-timeout").duration(Duration.ofSeconds(30));

        StoreSettings store = store(root);
        RuleSections sections = RuleSections.read(root);
        Map<String, Policy> policies = sections.policies();
        List<Rule> rules = sections.rules();
        ConfigNode upstreamNode = server.child("upstream");
        URI upstream = upstreamNode.isPresent() ? upstream(upstreamNode) : null;
        // A proxy's clients come from anywhere; a decision server's port spends buckets, so it serves this host only
        String host = hostNode.string(upstream != null ? "0.0.0.0" : ServerConfig.DEFAULT_DECISION_HOST);
        ConfigNode timeoutNode = server.child("upstream-timeout");
        if (upstream == null && timeoutNode.isPresent()) {
            throw timeoutNode.error("applies only with an upstream");
        }
        boolean forwardAuth = server.child("forward-auth").bool(false);
        if (upstream == null && !forwardAuth && !rules.isEmpty()) {
            throw root.child("rules")
                    .error("limit proxied requests, so they need server.upstream, or forward-auth requests"
                            + " (server.forward-auth: true)");
        }
        if (upstream == null && sections.overload() != null) {
            throw root.child("overload").error("protects the upstream from overload, so it needs server.upstream");
        }
        Callers callers = CallersSection.read(root.child("callers"), policies);
        ConfigNode envoyNode = root.child("envoy");
        EnvoyListener envoy = envoy(envoyNode, policies);
        Listeners listeners = new Listeners(
                host,
                port,
                tls(server.child("tls")),
                management(server),
                decisionPort(server, upstream != null),
                exposure(server, upstream != null),
                EdgeSettings.allowedHosts(server.child("allowed-hosts")),
                server.child("request-head-timeout").duration(Duration.ofSeconds(10)),
                EdgeSettings.maxConnections(server.child("max-connections")));
        OpenPorts.check(root, listeners, envoy, callers, upstream != null);
        return new ServerConfig(
                listeners,
                shutdownTimeout,
                idleTimeout,
                store,
                policies,
                rules,
                sections.clientIps(),
                upstream,
                timeoutNode.duration(Duration.ofSeconds(30)),
                EdgeSettings.maxBodyBytes(server.child("max-body-size"), upstream != null),
                sections.responses(),
                envoy,
                TopKeysSettings.read(root.child("top-keys")),
                sections.overload(),
                forwardAuth,
                sharedRuleKeys(server.child("decision-api-shares-rule-keys"), policies),
                callers,
                server.child("warm-up").bool(true),
                null,
                null);
    }

    /** Reads the policies whose decision API keys are the proxy rules' keys: each one defined, none twice. */
    private static Set<String> sharedRuleKeys(ConfigNode node, Map<String, Policy> policies) {
        Set<String> names = new LinkedHashSet<>();
        for (ConfigNode element : node.elements()) {
            String name = element.requiredString();
            if (!policies.containsKey(name)) {
                throw element.error("unknown policy '" + name + "'; defined: "
                        + (policies.isEmpty() ? "none" : String.join(", ", new TreeSet<>(policies.keySet()))));
            }
            if (!names.add(name)) {
                throw element.error("names policy '" + name + "' twice");
            }
        }
        return names;
    }

    private static Listeners.Management management(ConfigNode server) {
        ConfigNode portNode = server.child("management-port");
        ConfigNode hostNode = server.child("management-host");
        ConfigNode tokenNode = server.child("management-token");
        if (!portNode.isPresent()) {
            for (ConfigNode node : List.of(hostNode, tokenNode, server.child("management-tls"))) {
                if (node.isPresent()) {
                    throw node.error("applies only with server.management-port");
                }
            }
            return null;
        }
        int port = port(portNode, 0);
        String token = tokenNode.secret(null);
        if (token != null && (token.isBlank() || !token.chars().allMatch(c -> c > 0x20 && c < 0x7f))) {
            throw tokenNode.error("must be printable ASCII without spaces, as a bearer token is sent");
        }
        Listeners.Management management = new Listeners.Management(
                port,
                hostNode.string(ServerConfig.DEFAULT_MANAGEMENT_HOST),
                token,
                tls(server.child("management-tls")));
        ConfigNode openNode = server.child("management-allow-unauthenticated");
        if (management.unauthenticated() && !openNode.bool(false)) {
            throw hostNode.error("binds " + management.host() + " without server.management-token, so anyone who"
                    + " reaches the port can reset buckets and reload the configuration: set a token, bind 127.0.0.1,"
                    + " or set server.management-allow-unauthenticated: true");
        }
        return management;
    }

    /**
     * Reads a port's TLS: the certificate chain and private key (PEM files, read now, so that a file the server could
     * not use stops the start), and the certificate authorities of client certificates, which are then required
     * unless {@code client-auth} says {@code optional}; null where the section is absent.
     */
    private static TlsSettings tls(ConfigNode node) {
        if (!node.isPresent()) {
            return null;
        }
        node.checkKeys(TLS);
        ConfigNode clientCa = node.child("client-ca");
        ConfigNode clientAuthNode = node.child("client-auth");
        String auth = clientAuthNode.string(clientCa.isPresent() ? "required" : "none");
        TlsSettings.ClientAuth clientAuth = switch (auth) {
            case "required" -> TlsSettings.ClientAuth.REQUIRED;
            case "optional" -> TlsSettings.ClientAuth.OPTIONAL;
            case "none" -> TlsSettings.ClientAuth.NONE;
            default -> throw clientAuthNode.error("must be required, optional or none, was '" + auth + "'");
        };
        if (clientAuth != TlsSettings.ClientAuth.NONE && !clientCa.isPresent()) {
            throw clientAuthNode.error("asks for client certificates, so it needs client-ca: the certificate"
                    + " authorities that sign them");
        }
        TlsSettings settings = new TlsSettings(
                Path.of(node.child("certificate").requiredString()),
                Path.of(node.child("private-key").requiredString()),
                clientCa.isPresent() ? Path.of(clientCa.requiredString()) : null,
                clientAuth);
        try {
            new TlsFiles(settings, node.path());
        } catch (IllegalArgumentException e) {
            throw node.error(e.getMessage().substring(node.path().length() + 2)); // it named the path itself
        }
        return settings;
    }

    /**
     * Reads the decision API's own port: only beside a proxy, whose public port does not serve it; without an
     * upstream the public port serves the decision API.
     */
    private static Listeners.DecisionPort decisionPort(ConfigNode server, boolean proxy) {
        ConfigNode portNode = server.child("decision-port");
        ConfigNode hostNode = server.child("decision-host");
        if (!portNode.isPresent()) {
            for (ConfigNode node : List.of(hostNode, server.child("decision-tls"))) {
                if (node.isPresent()) {
                    throw node.error("applies only with server.decision-port");
                }
            }
            return null;
        }
        if (!proxy) {
            throw portNode.error("applies only beside a proxy (server.upstream): without an upstream the public port"
                    + " serves the decision API; remove it, or set server.port");
        }
        return new Listeners.DecisionPort(
                port(portNode, 0),
                hostNode.string(ServerConfig.DEFAULT_DECISION_HOST),
                tls(server.child("decision-tls")));
    }

    /**
     * Reads what the public port serves besides its role. The decision API and health on a proxy's public port
     * share the upstream's paths and its clients, so each takes a setting of its own; a decision server's public
     * port serves both as its role, so there the settings are refused as saying nothing.
     */
    private static Listeners.PublicExposure exposure(ConfigNode server, boolean proxy) {
        ConfigNode decisionApi = server.child("expose-decision-api-publicly");
        ConfigNode health = server.child("expose-health-publicly");
        if (!proxy) {
            for (ConfigNode node : List.of(decisionApi, health)) {
                if (node.isPresent()) {
                    throw node.error("applies only beside a proxy (server.upstream): without an upstream the public"
                            + " port serves the decision API and health already");
                }
            }
        }
        return new Listeners.PublicExposure(
                decisionApi.bool(false),
                health.bool(false),
                server.child("expose-metrics-publicly").bool(false));
    }

    private static EnvoyListener envoy(ConfigNode envoy, Map<String, Policy> policies) {
        if (!envoy.isPresent()) {
            return null;
        }
        envoy.checkKeys(ENVOY);
        ConfigNode portNode = envoy.child("port");
        int port = port(portNode, ServerConfig.DEFAULT_ENVOY_PORT);
        String host = envoy.child("host").string(ServerConfig.DEFAULT_ENVOY_HOST);
        TlsSettings tls = tls(envoy.child("tls"));
        boolean xRateLimitHeaders = envoy.child("x-ratelimit-headers").bool(false);
        boolean shadowMode = envoy.child("shadow-mode").bool(false);
        boolean mergeDomains = envoy.child("merge-domains").bool(false);
        ConfigNode configNode = envoy.child("config");
        QuotaSettings quota = QuotaSettings.read(envoy.child("quota"), policies);
        // A server that hands out quota only needs no rate limit files
        Path config = quota != null && !configNode.isPresent() ? null : Path.of(configNode.requiredString());
        EnvoyRateLimits limits;
        try {
            limits = config == null ? EnvoyRateLimits.none() : EnvoyRateLimits.load(config, policies, mergeDomains);
        } catch (IllegalArgumentException e) {
            throw configNode.error(e.getMessage());
        }
        return new EnvoyListener(
                port, host, config, new EnvoyService.Setup(limits, xRateLimitHeaders, shadowMode, quota), tls);
    }

    /**
     * Reads the store whose section the file holds (memory without one), which must be able to open alone: the
     * file names its Redis.
     */
    private static StoreSettings store(ConfigNode root) {
        StoreSettings store = Stores.read(root);
        store.needs().ifPresent(needed -> {
            throw root.child(store.name()).error(needed);
        });
        return store;
    }

    private static URI upstream(ConfigNode node) {
        String text = node.requiredString();
        URI uri = null;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            // reported below, as any other text that is not an upstream URI
        }
        String scheme =
                uri == null || uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
            throw node.error("must be an http:// or https:// URI with a host, such as http://127.0.0.1:9000; was '"
                    + text + "'");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null || uri.getRawUserInfo() != null) {
            throw node.error("must not have a query, fragment or user info, was '" + text + "'");
        }
        return uri;
    }

    /** Reads a port setting, {@code defaultPort} when absent, naming the setting when it is out of range. */
    private static int port(ConfigNode node, long defaultPort) {
        try {
            return checkPort(node.longValue(defaultPort));
        } catch (IllegalArgumentException e) {
            throw node.error(e);
        }
    }

    /**
     * Returns {@code port} if it is one.
     *
     * @throws IllegalArgumentException if it is out of range, naming it
     */
    static int checkPort(long port) {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port must be 0 to 65535, was " + port);
        }
        return (int) port;
    }
}
