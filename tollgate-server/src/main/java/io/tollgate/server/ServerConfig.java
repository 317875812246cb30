package io.tollgate.server;

import io.tollgate.Policy;
import io.tollgate.config.ConfigException;
import io.tollgate.http.ClientIpResolver;
import io.tollgate.http.OverloadProtection;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.http.YamlConfig;
import io.tollgate.runtime.Stores;
import io.tollgate.server.Listeners.Management;
import io.tollgate.server.internal.access.Callers;
import io.tollgate.spi.StoreSettings;
import io.tollgate.top.TopKeysSettings;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * What one Tollgate server runs, as its YAML file says: where it listens, where buckets live, the policies,
 * the rules that limit proxied requests, the client IPs and the upstream. See {@code docs/configuration.md}
 * for every key. Immutable.
 */
public final class ServerConfig {

    /** The port the server listens on when the file does not say. */
    public static final int DEFAULT_PORT = 8080;

    /** The port Envoy's rate limit service listens on when the {@code envoy} section does not say. */
    public static final int DEFAULT_ENVOY_PORT = 8081;

    /** The address the management port binds when the file does not say: this host only. */
    public static final String DEFAULT_MANAGEMENT_HOST = "127.0.0.1";

    /** The address the decision API's own port binds when the file does not say: this host only. */
    public static final String DEFAULT_DECISION_HOST = "127.0.0.1";

    /** The address Envoy's services bind unless {@code envoy.host} says: this host only. */
    public static final String DEFAULT_ENVOY_HOST = "127.0.0.1";

    private final Listeners listeners;
    private final Duration shutdownTimeout;
    private final Duration idleTimeout;
    /** Where buckets live: the store whose section the file holds ({@link Stores}). */
    private final StoreSettings store;

    private final Map<String, Policy> policies;
    private final List<Rule> rules;
    private final ClientIpResolver clientIps;
    private final URI upstream;
    private final Duration upstreamTimeout;
    private final long maxBodyBytes;
    private final UnaryOperator<RequestLimiter.Builder> responses;
    private final EnvoyListener envoy;
    private final TopKeysSettings topKeys;
    private final OverloadProtection.Settings overload;
    private final boolean forwardAuth;
    /** The policies whose decision API keys are the proxy rules' keys ({@code server.decision-api-shares-rule-keys}). */
    private final Set<String> sharedRuleKeys;
    /** Who may ask the decision API and Envoy's service ({@code callers}). */
    private final Callers callers;
    /** Whether the server runs its paths before it says it is ready ({@code server.warm-up}). */
    private final boolean warmUp;
    /** The file this was read from, or null. */
    private final Path source;
    /** The port that {@link #withPort} set over the file's, or null. */
    private final Integer portOverride;

    /** For {@link ServerSections}, which reads a file into one. */
    ServerConfig(
            Listeners listeners,
            Duration shutdownTimeout,
            Duration idleTimeout,
            StoreSettings store,
            Map<String, Policy> policies,
            List<Rule> rules,
            ClientIpResolver clientIps,
            URI upstream,
            Duration upstreamTimeout,
            long maxBodyBytes,
            UnaryOperator<RequestLimiter.Builder> responses,
            EnvoyListener envoy,
            TopKeysSettings topKeys,
            OverloadProtection.Settings overload,
            boolean forwardAuth,
            Set<String> sharedRuleKeys,
            Callers callers,
            boolean warmUp,
            Path source,
            Integer portOverride) {
        this.listeners = listeners;
        this.shutdownTimeout = shutdownTimeout;
        this.idleTimeout = idleTimeout;
        this.store = store;
        this.policies = Map.copyOf(policies);
        this.rules = List.copyOf(rules);
        this.clientIps = clientIps;
        this.upstream = upstream;
        this.upstreamTimeout = upstreamTimeout;
        this.maxBodyBytes = maxBodyBytes;
        this.responses = responses;
        this.envoy = envoy;
        this.topKeys = topKeys;
        this.overload = overload;
        this.forwardAuth = forwardAuth;
        this.sharedRuleKeys = Set.copyOf(sharedRuleKeys);
        this.callers = callers;
        this.warmUp = warmUp;
        this.source = source;
        this.portOverride = portOverride;
    }

    /**
     * Reads a YAML configuration file.
     *
     * @throws IllegalArgumentException if the file cannot be read or is invalid, with a message that names
     *     the file, the line and the problem, such as {@code tollgate.yaml:12: rules[0].policy: unknown
     *     policy 'per-clent'; defined: per-client}
     */
    public static ServerConfig load(Path file) {
        Objects.requireNonNull(file, "file");
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("cannot read config file '" + file + "': no such file", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read config file '" + file + "': " + e.getMessage(), e);
        }
        ServerConfig read = parse(text, file.toString());
        return new ServerConfig(
                read.listeners,
                read.shutdownTimeout,
                read.idleTimeout,
                read.store,
                read.policies,
                read.rules,
                read.clientIps,
                read.upstream,
                read.upstreamTimeout,
                read.maxBodyBytes,
                read.responses,
                read.envoy,
                read.topKeys,
                read.overload,
                read.forwardAuth,
                read.sharedRuleKeys,
                read.callers,
                read.warmUp,
                file,
                null);
    }

    /**
     * Parses the text of a YAML configuration file named {@code fileName} (for messages).
     *
     * @throws IllegalArgumentException if the configuration is invalid, naming the file, the line and the
     *     problem
     */
    public static ServerConfig parse(String text, String fileName) {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(fileName, "fileName");
        try {
            return ServerSections.read(YamlConfig.parse(text));
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.messageIn(fileName), e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(fileName + ": " + e.getMessage(), e);
        }
    }

    /**
     * Returns this configuration listening on {@code port} instead; 0 picks a free port.
     *
     * @throws IllegalArgumentException if port is not 0 to 65535
     */
    public ServerConfig withPort(int port) {
        return withStart(listeners.withPort(ServerSections.checkPort(port)), warmUp, port);
    }

    /**
     * Returns this configuration with its warm-up on or off ({@code server.warm-up}). Off, a server says it is
     * ready as soon as it listens instead of after up to 20 s of warming up: for tests and development, where its
     * first requests may pay for loading classes and compiling code. Production keeps it on.
     */
    public ServerConfig withWarmUp(boolean warmUp) {
        return withStart(listeners, warmUp, portOverride);
    }

    /** This configuration with other settings of how the server starts: where it listens, and its warm-up. */
    private ServerConfig withStart(Listeners listeners, boolean warmUp, Integer portOverride) {
        return new ServerConfig(
                listeners,
                shutdownTimeout,
                idleTimeout,
                store,
                policies,
                rules,
                clientIps,
                upstream,
                upstreamTimeout,
                maxBodyBytes,
                responses,
                envoy,
                topKeys,
                overload,
                forwardAuth,
                sharedRuleKeys,
                callers,
                warmUp,
                source,
                portOverride);
    }

    /**
     * Reads the file this configuration was read from again, with the same {@link #withPort port} over it.
     *
     * @throws IllegalStateException if this configuration was not read from a file
     * @throws IllegalArgumentException if the file cannot be read or is invalid, as {@link #load} says
     */
    ServerConfig reread() {
        if (source == null) {
            throw new IllegalStateException("this configuration was not read from a file");
        }
        ServerConfig read = load(source);
        return portOverride == null ? read : read.withPort(portOverride);
    }

    /** Returns the file this configuration was read from, or null. */
    Path source() {
        return source;
    }

    /**
     * Returns {@code next}'s policies, rules, client IPs and responses, with this configuration's settings
     * that take effect only at a start: where it listens, the store, the upstream and the management port.
     */
    ServerConfig reloadedAs(ServerConfig next) {
        return new ServerConfig(
                listeners,
                shutdownTimeout,
                idleTimeout,
                store,
                next.policies,
                next.rules,
                next.clientIps,
                upstream,
                upstreamTimeout,
                maxBodyBytes,
                next.responses,
                envoy == null || next.envoy == null
                        ? envoy
                        : new EnvoyListener(
                                envoy.port(), envoy.host(), next.envoy.config(), next.envoy.setup(), envoy.tls()),
                topKeys,
                next.overload,
                forwardAuth,
                next.sharedRuleKeys,
                next.callers,
                warmUp,
                source,
                portOverride);
    }

    /** Returns the address the server binds, {@code 0.0.0.0} (every interface) unless the file says. */
    public String host() {
        return listeners.host();
    }

    /** Returns the port, 0 for a free one. */
    public int port() {
        return listeners.port();
    }

    /** Returns where the server listens and what its public port serves besides its role. */
    Listeners listeners() {
        return listeners;
    }

    /** Returns how long a stopping server lets requests in flight finish. */
    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    /**
     * Returns how long a connection may neither send nor take a byte before it is closed (a client that sends its
     * request a byte at a time, or never reads its answer).
     */
    Duration idleTimeout() {
        return idleTimeout;
    }

    /** Returns the policies by name. */
    public Map<String, Policy> policies() {
        return policies;
    }

    /** Returns the rules that limit proxied requests, in the order they are checked. */
    public List<Rule> rules() {
        return rules;
    }

    /** Returns the upstream that requests are proxied to, or null for a decision API only. */
    public URI upstream() {
        return upstream;
    }

    StoreSettings store() {
        return store;
    }

    /** Returns Envoy's rate limit service's settings, or null when the file has no {@code envoy} section. */
    EnvoyListener envoy() {
        return envoy;
    }

    /** Returns how the keys limited most are counted and shown. */
    TopKeysSettings topKeys() {
        return topKeys;
    }

    /** Returns whether the public port answers {@value ForwardAuth#PATH} ({@code server.forward-auth}). */
    boolean forwardAuth() {
        return forwardAuth;
    }

    /**
     * Returns the names of the policies whose decision API keys are the proxy rules' keys ({@code
     * server.decision-api-shares-rule-keys}): a service checks the bucket its proxy charges. Every other policy's
     * decision API keys live apart, so that no caller of the decision API can spend a proxied client's tokens.
     */
    Set<String> sharedRuleKeys() {
        return sharedRuleKeys;
    }

    /**
     * Returns whether the server runs its paths before it says it is ready ({@code server.warm-up}, true unless
     * the file says): the first real requests then pay for no class loading or compiling.
     */
    public boolean warmUp() {
        return warmUp;
    }

    /** Returns who may ask the decision API and Envoy's service: {@link Callers#NONE} unless the file names them. */
    Callers callers() {
        return callers;
    }

    /** Returns the settings of overload protection in front of the upstream, or null where it is not enabled. */
    OverloadProtection.Settings overload() {
        return overload;
    }

    /** Returns the management port's settings, or null when the file sets no management port. */
    Management management() {
        return listeners.management();
    }

    ClientIpResolver clientIps() {
        return clientIps;
    }

    Duration upstreamTimeout() {
        return upstreamTimeout;
    }

    /** The largest body the proxy forwards, in bytes ({@code server.max-body-size}). */
    long maxBodyBytes() {
        return maxBodyBytes;
    }

    /**
     * Returns a builder for a request limiter without rules, that renders decisions of {@code limiter} as the
     * {@code responses} section says: for the decision API.
     */
    RequestLimiter.Builder responses(io.tollgate.RateLimiter limiter) {
        return responses.apply(RequestLimiter.builder(limiter));
    }

    /** Returns a builder for the request limiter that enforces the rules with {@code limiter}. */
    RequestLimiter.Builder requestLimiter(io.tollgate.RateLimiter limiter) {
        return responses.apply(RequestLimiter.builder(limiter).rules(rules).clientIps(clientIps));
    }
}
