package io.tollgate.server;

import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.runtime.TollgateRuntime;
import io.tollgate.server.internal.envoy.EnvoyService;
import io.tollgate.server.internal.tls.TlsFiles;
import io.tollgate.spi.StoreContext;
import io.tollgate.top.TopKeys;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A running Tollgate server: the decision API, the health and metrics endpoints, and, with an upstream, the
 * rate-limiting reverse proxy, on one port; or, with a management port, health, metrics and the admin API
 * there and the proxy or the decision API alone on the public port. {@link #start(ServerConfig)} returns once it accepts connections
 * and is warm: connected to the store, its scripts loaded, and its request paths run enough that the first
 * real requests pay for no class loading or compilation ({@link WarmUp}); until then {@code /readyz}
 * answers 503. {@link #close()} stops it gracefully: it stops accepting, lets requests in flight finish for
 * up to the configured shutdown timeout, then closes the store.
 *
 * <p>Thread-safe.
 */
public final class TollgateServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /** The public port and the management port, on Netty's event loops. */
    private final DataPlane dataPlane;

    private final String host;
    /** The management port's host, or null without one. */
    private final String managementHost;
    /** The decision port's host, or null without one. */
    private final String decisionHost;

    private final AtomicBoolean closed = new AtomicBoolean();
    /** The store, its limiter (observed by the metrics and the top keys) and the top keys; closed last. */
    private final TollgateRuntime runtime;

    private final RateLimiter limiter;

    private final StoreMonitor store;
    private final String storeDescription;
    /** What the running configuration sets; a reload swaps it. */
    private final AtomicReference<Limits> limits;

    private final ConfigReloader reloader;
    /** Who the servers limit, this one's counts merged with the others'; null unless top-keys are counted. */
    private final TopKeys countedKeys;
    /** What the management page charts, sampled from the meters; null without a management port. */
    private final MeterHistory history;
    /** Envoy's rate limit service, or null without an {@code envoy} section. */
    private final EnvoyService envoy;

    private final EnvoyListener envoyConfig;
    private final Duration shutdownTimeout;
    /** Reads the TLS files of the ports that serve TLS again when they change; null without any. */
    private final TlsWatch tlsWatch;
    /** The schemes of the public, decision and management ports: https where they serve TLS. */
    private final String scheme;

    private final String decisionScheme;
    private final String managementScheme;

    private TollgateServer(ServerConfig config, TimeSource clock) throws Exception {
        ServerMetrics metrics = new ServerMetrics();
        runtime = TollgateRuntime.open(
                config.store(), new StoreContext(clock, List.of(metrics.limiter(), config.topKeys())));
        limiter = runtime.limiter();
        storeDescription = runtime.description();
        store = StoreMonitor.of(runtime.store(), storeDescription, metrics::fallbackDecisions);
        countedKeys = runtime.topKeys().orElse(null);
        limits = new AtomicReference<>(Limits.of(config, limiter, metrics, null));
        reloader = new ConfigReloader(limits, limiter, metrics);
        Readiness readiness = new Readiness(store);
        Listeners.Management management = config.management();
        host = config.host();
        scheme = config.listeners().tls() == null ? "http" : "https";
        decisionScheme = config.listeners().decision() == null
                        || config.listeners().decision().tls() == null
                ? "http"
                : "https";
        managementScheme = management == null || management.tls() == null ? "http" : "https";
        managementHost = management == null ? null : management.host();
        decisionHost = config.listeners().decision() == null
                ? null
                : config.listeners().decision().host();
        history = management == null ? null : MeterHistory.sampling(metrics.registry());
        AdminApi admin = management == null
                ? null
                : new AdminApi(
                        () -> limits.get().config(),
                        limiter,
                        storeDescription,
                        reloader,
                        countedKeys,
                        config.topKeys().show(),
                        new LiveViews(history, store, storeDescription));
        envoyConfig = config.envoy();
        shutdownTimeout = config.shutdownTimeout();
        EnvoyService rls = null;
        DataPlane plane = null;
        TlsFiles envoyTls = null;
        try {
            if (envoyConfig != null) {
                envoyTls = envoyConfig.tls() == null ? null : new TlsFiles(envoyConfig.tls(), "envoy.tls");
                rls = EnvoyService.start(
                        envoyConfig.host(),
                        envoyConfig.port(),
                        limiter,
                        metrics.registry(),
                        () -> limits.get().config().envoy().setup(),
                        () -> limits.get().config().callers(),
                        metrics.callers(),
                        envoyTls);
            }
            plane = new DataPlane(
                    config.listeners(),
                    limits::get,
                    readiness,
                    metrics,
                    admin,
                    config.upstream() == null
                            ? null
                            : new UpstreamConnections(
                                    config.upstream(), config.upstreamTimeout(), config.maxBodyBytes()),
                    config.idleTimeout(),
                    config.shutdownTimeout());
        } catch (Exception e) {
            if (rls != null) {
                rls.close();
            }
            closeQuietly();
            throw e;
        }
        dataPlane = plane;
        envoy = rls;
        List<TlsFiles> tls = new ArrayList<>(plane.tlsFiles());
        if (envoyTls != null) {
            tls.add(envoyTls);
        }
        tlsWatch = TlsWatch.start(tls);
        Limits started = limits.get();
        if (config.warmUp()) {
            WarmUp.run(
                    limiter,
                    started.requests() != null ? started.requests() : started.answers(),
                    metrics,
                    loopbackPort(config),
                    management == null ? null : management.token(),
                    envoy,
                    envoy == null ? null : started.config().envoy().setup());
        } else {
            WarmUp.skipped();
        }
        store.countFromNow(); // the meters forgot the warm-up's decisions: an outage's count starts from theirs
        readiness.ready();
        if (envoy != null) {
            envoy.serving(true);
            store.onChange(answers -> envoy.serving(answers));
        }
        for (String setting : config.listeners().exposure().settings()) {
            LOG.log(Level.WARNING, "tollgate: {0} is on: {1}", setting, exposureWarning(setting));
        }
        for (String warning : OpenPorts.warnings(
                config,
                config.management() == null ? null : managementUri().toString(),
                config.envoy() == null ? null : envoyAddress())) {
            LOG.log(Level.WARNING, warning);
        }
        LOG.log(
                Level.INFO,
                "tollgate started on {0}, store {1}{2}{3}",
                uri(),
                storeDescription,
                serving(config),
                exposed(config.listeners().exposure()));
    }

    /**
     * The port whose {@code /healthz} the warm-up asks over the loopback: the management port, else a public port
     * that serves health; 0 for none, or for one of TLS, whose loopback in plain text it cannot send.
     */
    private int loopbackPort(ServerConfig config) {
        Listeners.Management management = config.management();
        if (management != null) {
            return management.tls() == null ? managementUri().getPort() : 0;
        }
        return servesHealthPublicly(config) && config.listeners().tls() == null ? port() : 0;
    }

    /** Whether the public port answers {@code /healthz}: a decision server's does, a proxy's only where exposed. */
    private static boolean servesHealthPublicly(ServerConfig config) {
        return config.upstream() == null || config.listeners().exposure().health();
    }

    /** What the started line adds for the public port's exposures: a warning, or nothing. */
    static String exposed(Listeners.PublicExposure exposure) {
        List<String> settings = exposure.settings();
        return settings.isEmpty()
                ? ""
                : "; WARNING: the public port also serves what " + String.join(", ", settings)
                        + " expose, to every client that reaches it";
    }

    private static String exposureWarning(String setting) {
        return switch (setting) {
            case "server.expose-decision-api-publicly" ->
                "every client of the proxy may check and charge any key of any policy, other clients' included;"
                        + " serve the decision API on server.decision-port instead, or give it callers' tokens";
            case "server.expose-health-publicly" ->
                "/healthz and /readyz on the public port answer for Tollgate, not for the upstream's own paths of"
                        + " those names; the management port serves them to your probes";
            default ->
                "every client that reaches the public port may read the meters (policies, rates, the keys counted"
                        + " most); serve them on server.management-port instead";
        };
    }

    /** What the public port does, for the started line: proxying, answering forward-auth, or decisions only. */
    static String serving(ServerConfig config) {
        String forwardAuth = config.forwardAuth() ? ", forward-auth on " + ForwardAuth.PATH : "";
        return config.upstream() == null
                ? (forwardAuth.isEmpty() ? ", decision API only" : ", decision API" + forwardAuth)
                : ", proxying to " + config.upstream() + forwardAuth
                        + (config.listeners().decision() == null ? "" : ", decision API on its own port");
    }

    /**
     * Starts a server as {@code config} says and returns once it accepts connections.
     *
     * @throws Exception if it cannot listen (a port is taken) or the store cannot be set up
     */
    public static TollgateServer start(ServerConfig config) throws Exception {
        return new TollgateServer(Objects.requireNonNull(config, "config"), null);
    }

    /** Starts a server whose limiter reads time from {@code clock}, for tests. */
    static TollgateServer start(ServerConfig config, TimeSource clock) throws Exception {
        return new TollgateServer(config, Objects.requireNonNull(clock, "clock"));
    }

    /** Returns the port the server listens on: the configured one, or the one picked for port 0. */
    public int port() {
        return dataPlane.port();
    }

    /** Returns {@code http://HOST:PORT} (or {@code https://} with TLS) with the configured host and the real port. */
    public URI uri() {
        return uri(scheme, host, port());
    }

    /**
     * Returns the management port's {@code http://HOST:PORT} (or {@code https://}), with the real port, or null when the
     * configuration sets no management port.
     */
    public URI managementUri() {
        if (managementHost == null) {
            return null;
        }
        return uri(managementScheme, managementHost, dataPlane.managementPort());
    }

    /**
     * Returns the decision port's {@code http://HOST:PORT} (or {@code https://}), with the real port, or null when the configuration
     * sets no decision port ({@code server.decision-port}).
     */
    public URI decisionUri() {
        int decisionPort = dataPlane.decisionPort();
        return decisionPort < 0 ? null : uri(decisionScheme, decisionHost, decisionPort);
    }

    /**
     * Returns where Envoy's rate limit service listens, {@code HOST:PORT} with the configured host and the real
     * port, or null when the configuration has no {@code envoy} section.
     */
    public String envoyAddress() {
        if (envoy == null) {
            return null;
        }
        String host = envoyConfig.host();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + envoy.port();
    }

    /** Returns the port Envoy's rate limit service listens on, or -1 without one. */
    int envoyPort() {
        return envoy == null ? -1 : envoy.port();
    }

    private static URI uri(String scheme, String configuredHost, int port) {
        String host = configuredHost == null ? "0.0.0.0" : configuredHost;
        return URI.create(scheme + "://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port);
    }

    /**
     * Stops gracefully: stops accepting connections, lets requests in flight finish for up to the shutdown
     * timeout, then closes the store. Safe to call more than once.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (envoy != null) {
                envoy.stop(shutdownTimeout);
            }
            dataPlane.close();
            closeQuietly();
            LOG.log(Level.INFO, "tollgate stopped");
        }
    }

    /**
     * Reads the configuration file again and runs what it sets, if it is valid: the policies, rules, client
     * IPs and responses change at once, the buckets stay. Also done on SIGHUP (by {@link Main}), when the
     * file changes, and on the management port's {@code POST /admin/reload}.
     *
     * @return what happened: whether it runs, and what takes effect only at the next start
     */
    ConfigReloader.Result reload(String trigger) {
        return reloader.reload(trigger);
    }

    private void closeQuietly() {
        if (tlsWatch != null) {
            tlsWatch.close();
        }
        if (reloader != null) {
            reloader.close();
        }
        if (history != null) {
            history.close();
        }
        store.close();
        runtime.close(); // the top keys first, while the store's connection can still withdraw them
    }
}
