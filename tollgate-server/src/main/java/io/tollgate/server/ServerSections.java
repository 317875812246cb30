package io.tollgate.server;

import io.tollgate.Policy;
import io.tollgate.http.Rule;
import io.tollgate.http.internal.ConfigSchema;
import io.tollgate.http.internal.ConfigSections;
import io.tollgate.http.internal.RuleSections;
import io.tollgate.internal.config.ConfigException;
import io.tollgate.internal.config.ConfigNode;
import io.tollgate.internal.config.ConfigSection;
import io.tollgate.redis.internal.RedisSettings;
import io.tollgate.server.internal.envoy.EnvoyRateLimits;
import io.tollgate.server.internal.envoy.EnvoyService;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads the server's file into a {@link ServerConfig}: the sections it shares with a rules file (by {@link
 * RuleSections}), the stores ({@code redis} or {@code memory}), and the server's own ({@code server}, {@code envoy}),
 * each checked against its keys, and the settings that only make sense together. Stateless.
 */
final class ServerSections {

    private static final ConfigSection ENVOY =
            ConfigSection.of("envoy", "port", "host", "config", "x-ratelimit-headers", "shadow-mode", "merge-domains");

    private static final ConfigSection SERVER = ConfigSection.of(
            "server",
            "host",
            "port",
            "shutdown-timeout",
            "idle-timeout",
            "data-plane",
            "upstream",
            "upstream-timeout",
            "management-port",
            "management-host",
            "management-token",
            "forward-auth");

    /** The server's file: what a rules file holds, the stores, and the server's own sections. */
    private static final ConfigSection TOP = ConfigSchema.RULES
            .with("server", SERVER)
            .with("redis", RedisSettings.SECTION)
            .with("memory", ConfigSchema.MEMORY)
            .with("envoy", ENVOY)
            .with("top-keys", ConfigSchema.TOP_KEYS);

    /** Where the settings of the first server files went (one vocabulary, no aliases: see CHANGELOG.md). */
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
        String host = server.child("host").string("0.0.0.0");
        ConfigNode portNode = server.child("port");
        int port = port(portNode, ServerConfig.DEFAULT_PORT);
        Duration shutdownTimeout = server.child("shutdown-timeout").duration(Duration.ofSeconds(10));
        Duration idleTimeout = server.child("idle-timeout").duration(Duration.ofSeconds(30));

        ServerConfig.Store store = store(root.child("redis"), root.child("memory"));
        RuleSections sections = RuleSections.read(root);
        Map<String, Policy> policies = sections.policies();
        List<Rule> rules = sections.rules();
        ConfigNode upstreamNode = server.child("upstream");
        URI upstream = upstreamNode.isPresent() ? upstream(upstreamNode) : null;
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
        dataPlane(server.child("data-plane"));
        return new ServerConfig(
                host,
                port,
                shutdownTimeout,
                idleTimeout,
                store,
                policies,
                rules,
                sections.clientIps(),
                upstream,
                timeoutNode.duration(Duration.ofSeconds(30)),
                sections.responses(),
                management(server),
                envoy(root.child("envoy"), policies),
                ConfigSections.topKeys(root.child("top-keys")),
                sections.overload(),
                forwardAuth,
                null,
                null);
    }

    /**
     * Checks {@code server.data-plane}: {@code netty}, the only data plane since the Jetty one was removed, is
     * accepted so that configurations written for both planes keep starting; {@code jetty} is refused with why.
     */
    private static void dataPlane(ConfigNode node) {
        String text = node.string("netty");
        switch (text) {
            case "netty" -> {}
            case "jetty" ->
                throw node.error("the Jetty data plane was removed: the server runs on Netty's event loops only;"
                        + " remove the setting");
            default -> throw node.error("must be netty (the only data plane), was '" + text + "'");
        }
    }

    private static ServerConfig.Management management(ConfigNode server) {
        ConfigNode portNode = server.child("management-port");
        ConfigNode hostNode = server.child("management-host");
        ConfigNode tokenNode = server.child("management-token");
        if (!portNode.isPresent()) {
            for (ConfigNode node : List.of(hostNode, tokenNode)) {
                if (node.isPresent()) {
                    throw node.error("applies only with server.management-port");
                }
            }
            return null;
        }
        int port = port(portNode, 0);
        String token = tokenNode.isPresent() ? tokenNode.requiredString() : null;
        if (token != null && (token.isBlank() || !token.chars().allMatch(c -> c > 0x20 && c < 0x7f))) {
            throw tokenNode.error("must be printable ASCII without spaces, as a bearer token is sent");
        }
        return new ServerConfig.Management(port, hostNode.string(ServerConfig.DEFAULT_MANAGEMENT_HOST), token);
    }

    private static ServerConfig.Envoy envoy(ConfigNode envoy, Map<String, Policy> policies) {
        if (!envoy.isPresent()) {
            return null;
        }
        envoy.checkKeys(ENVOY);
        ConfigNode portNode = envoy.child("port");
        int port = port(portNode, ServerConfig.DEFAULT_ENVOY_PORT);
        String host = envoy.child("host").string("0.0.0.0");
        boolean xRateLimitHeaders = envoy.child("x-ratelimit-headers").bool(false);
        boolean shadowMode = envoy.child("shadow-mode").bool(false);
        boolean mergeDomains = envoy.child("merge-domains").bool(false);
        ConfigNode configNode = envoy.child("config");
        Path config = Path.of(configNode.requiredString());
        EnvoyRateLimits limits;
        try {
            limits = EnvoyRateLimits.load(config, policies, mergeDomains);
        } catch (IllegalArgumentException e) {
            throw configNode.error(e.getMessage());
        }
        return new ServerConfig.Envoy(
                port, host, config, new EnvoyService.Setup(limits, xRateLimitHeaders, shadowMode));
    }

    private static ServerConfig.Store store(ConfigNode redis, ConfigNode memory) {
        if (!redis.isPresent()) {
            return new ServerConfig.MemoryStore(ConfigSections.maximumKeys(memory));
        }
        if (memory.isPresent()) {
            throw memory.error("applies only without redis; choose one");
        }
        RedisSettings settings = RedisSettings.read(redis);
        if (!settings.hasTarget()) {
            throw redis.error("needs uri (one server, Sentinel or TLS) or cluster-uris (the seed nodes of a cluster)");
        }
        return new ServerConfig.RedisStore(settings);
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
