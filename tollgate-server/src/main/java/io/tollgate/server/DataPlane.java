package io.tollgate.server;

import io.micrometer.core.instrument.Counter;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.tollgate.server.internal.tls.TlsContexts;
import io.tollgate.server.internal.tls.TlsFiles;
import io.tollgate.server.internal.tls.TlsSettings;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;

/**
 * The server's ports on Netty's event loops: one loop per core, each
 * connection on one of them for its whole life, and every exchange of a connection read, decided, rendered and
 * written there, without handing it to another thread (a decision the store completes on its own I/O thread is
 * rendered back on the connection's loop). Each port serves its role ({@link Routes}): the public port the
 * proxy or, without an upstream, the decision API; the decision port, beside a proxy, the decision API; the
 * management port health, metrics and the admin API behind its token, with the work that may block (a scrape, an
 * admin call waiting for the store) on two threads of its own. Each exchange is handled by an {@link
 * Exchanges}.
 *
 * <p>At the edge: a request line over {@value #MAX_REQUEST_LINE_BYTES} bytes is answered 414, headers over
 * {@value #MAX_HEADER_BYTES} bytes 431, any other malformed request 400, each as a problem, and the connection
 * closed; a connection that neither sends nor takes a byte for the idle timeout ({@code server.idle-timeout}: a
 * client that sends its request a byte at a time, or never reads its answer) is closed.
 *
 * <p>{@link #close} stops accepting, lets the exchanges in flight finish for up to the shutdown timeout, then
 * closes every connection. Thread-safe.
 */
final class DataPlane implements AutoCloseable {

    /** The longest request line, in bytes (as Jetty's and nginx's defaults allow). */
    static final int MAX_REQUEST_LINE_BYTES = 8 * 1024;

    /** The most bytes of header fields (as Jetty's default). */
    static final int MAX_HEADER_BYTES = 8 * 1024;

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    private final EventLoopGroup loops;
    private final ChannelGroup connections =
            new DefaultChannelGroup("tollgate-connections", GlobalEventExecutor.INSTANCE);
    /** Where work that may block runs: metrics scrapes and the admin API. */
    private final ExecutorService blocking;

    private final AtomicInteger inFlight = new AtomicInteger();
    private final Channel listener;
    /** The management port's listener, or null without one. */
    private final Channel managementListener;
    /** The decision port's listener, or null without one. */
    private final Channel decisionListener;
    /** The TLS files of the ports that serve TLS, read again when they change. */
    private final List<TlsFiles> tlsFiles = new ArrayList<>(3);

    private final Duration shutdownTimeout;
    private final Duration headTimeout;
    private final int maxConnections;
    private final Counter overConnections;
    private final Counter slowHeads;
    private volatile boolean stopping;

    /**
     * Starts listening on the public port, and on the decision port and the management port where {@code
     * listeners} set them (each 0 for a free one), and returns once all accept connections.
     *
     * @param admin the admin API the management port serves; ignored without one
     * @param upstreams the proxy's upstream connections, or null to serve the decision API on the public port
     * @throws java.net.BindException if a port is taken
     * @throws InterruptedException if interrupted while binding
     * @throws SSLException if a port's TLS context cannot be made
     */
    DataPlane(
            Listeners listeners,
            Supplier<Limits> limits,
            Readiness readiness,
            ServerMetrics metrics,
            AdminApi admin,
            UpstreamConnections upstreams,
            Duration idleTimeout,
            Duration shutdownTimeout)
            throws InterruptedException, SSLException {
        this.shutdownTimeout = shutdownTimeout;
        this.headTimeout = listeners.headTimeout();
        this.maxConnections = listeners.maxConnections();
        this.overConnections = metrics.connectionsRefused("max-connections");
        this.slowHeads = metrics.connectionsRefused("head-timeout");
        this.loops = new MultiThreadIoEventLoopGroup(
                Runtime.getRuntime().availableProcessors(),
                new DefaultThreadFactory("tollgate-http", true),
                NioIoHandler.newFactory());
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                2,
                2,
                60,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                new DefaultThreadFactory("tollgate-blocking", true));
        pool.allowCoreThreadTimeOut(true);
        this.blocking = pool;
        Listeners.Management management = listeners.management();
        Listeners.DecisionPort decision = listeners.decision();
        List<Channel> bound = new ArrayList<>(3);
        try {
            bound.add(listen(
                    listeners.host(),
                    listeners.port(),
                    Endpoints.publicPort(limits, readiness, metrics, listeners.exposure(), blocking, upstreams)
                            .withHostNames(listeners.allowedHosts()),
                    idleTimeout,
                    tls(listeners.tls(), "server.tls")));
            this.decisionListener = decision == null
                    ? null
                    : add(
                            bound,
                            listen(
                                    decision.host(),
                                    decision.port(),
                                    Endpoints.decisionPort(limits, readiness, metrics, blocking)
                                            .withHostNames(listeners.allowedHosts()),
                                    idleTimeout,
                                    tls(decision.tls(), "server.decision-tls")));
            this.managementListener = management == null
                    ? null
                    : add(
                            bound,
                            listen(
                                    management.host(),
                                    management.port(),
                                    Endpoints.managementPort(readiness, metrics, blocking, admin, management.token())
                                            .withHostNames(listeners.allowedHosts()),
                                    idleTimeout,
                                    tls(management.tls(), "server.management-tls")));
        } catch (Throwable e) { // a taken port comes as a BindException, which Netty throws unchecked
            for (Channel channel : bound) {
                channel.close().awaitUninterruptibly();
            }
            shutDownThreads();
            throw e;
        }
        this.listener = bound.get(0);
    }

    private static Channel add(List<Channel> bound, Channel channel) {
        bound.add(channel);
        return channel;
    }

    /** Reads a port's TLS files and makes its context; null for a port of plain HTTP. */
    private SslContext tls(TlsSettings settings, String name) throws SSLException {
        if (settings == null) {
            return null;
        }
        TlsFiles files = new TlsFiles(settings, name);
        tlsFiles.add(files);
        return TlsContexts.http(files);
    }

    private Channel listen(String host, int port, Endpoints endpoints, Duration idleTimeout, SslContext tls)
            throws InterruptedException {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loops)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        if (connections.size() >= maxConnections) {
                            overConnections.increment();
                            channel.close(); // before a byte is read: the client sees its connection closed
                            return;
                        }
                        connections.add(channel);
                        if (tls != null) {
                            channel.pipeline().addLast(tls.newHandler(channel.alloc()));
                        }
                        channel.pipeline()
                                .addLast(new HeadDeadline(headTimeout, slowHeads::increment))
                                .addLast(new IdleStateHandler(0, 0, idleTimeout.toMillis(), TimeUnit.MILLISECONDS))
                                .addLast(new HttpServerCodec(new HttpDecoderConfig()
                                        .setMaxInitialLineLength(MAX_REQUEST_LINE_BYTES)
                                        .setMaxHeaderSize(MAX_HEADER_BYTES)))
                                .addLast(Exchanges.pipeline(endpoints, inFlight, () -> stopping));
                    }
                });
        return bootstrap.bind(host, port).sync().channel();
    }

    /** Returns the port it listens on. */
    int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** Returns the management port it listens on, or -1 without one. */
    int managementPort() {
        return managementListener == null ? -1 : ((InetSocketAddress) managementListener.localAddress()).getPort();
    }

    /** Returns the TLS files of its ports that serve TLS, to be read again when they change. */
    List<TlsFiles> tlsFiles() {
        return List.copyOf(tlsFiles);
    }

    /** Returns the decision port it listens on, or -1 without one. */
    int decisionPort() {
        return decisionListener == null ? -1 : ((InetSocketAddress) decisionListener.localAddress()).getPort();
    }

    /**
     * Stops accepting connections, lets the exchanges in flight finish for up to the shutdown timeout (answered
     * with {@code Connection: close}), then closes every connection and stops the event loops. Safe to call more
     * than once.
     */
    @Override
    public void close() {
        if (stopping) {
            return;
        }
        stopping = true;
        listener.close().awaitUninterruptibly();
        if (decisionListener != null) {
            decisionListener.close().awaitUninterruptibly();
        }
        if (managementListener != null) {
            managementListener.close().awaitUninterruptibly();
        }
        long deadline = System.nanoTime() + shutdownTimeout.toNanos();
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            try {
                TimeUnit.MILLISECONDS.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (inFlight.get() > 0) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "tollgate stopped with {0} requests still in flight after {1} ms",
                    inFlight.get(),
                    shutdownTimeout.toMillis());
        }
        connections.close().awaitUninterruptibly();
        shutDownThreads();
    }

    private void shutDownThreads() {
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        blocking.shutdownNow();
    }
}
