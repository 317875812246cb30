package io.tollgate.server;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocal;
import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * The {@link DataPlane}'s connections to the upstream: each opened on the event loop of the client connection
 * whose exchange needs it, and kept alive in that loop's own pool once the exchange is done, so that an exchange's
 * two connections are served by one thread and no pool is shared between threads. An idle connection is closed
 * after {@link #IDLE} (or the upstream timeout, if longer), or as soon as the upstream closes it.
 *
 * <p>Thread-safe: each loop touches only its own pool.
 */
final class UpstreamConnections {

    /** The most idle connections a loop keeps; past them a connection done with is closed. */
    static final int MAX_IDLE_PER_LOOP = 1_024;

    /** How long an idle connection is kept, at least. */
    static final Duration IDLE = Duration.ofSeconds(30);

    /** The longest status line and header block an upstream may answer with. */
    private static final int MAX_RESPONSE_HEAD_BYTES = 16 * 1024;

    private final URI upstream;
    private final String authority;
    private final Duration timeout;
    private final long maxBodyBytes;
    private final Bootstrap bootstrap;
    private final FastThreadLocal<ArrayDeque<Channel>> idle = new FastThreadLocal<>() {
        @Override
        protected ArrayDeque<Channel> initialValue() {
            return new ArrayDeque<>();
        }
    };

    UpstreamConnections(URI upstream, Duration timeout, long maxBodyBytes) {
        this.upstream = upstream;
        this.timeout = timeout;
        this.maxBodyBytes = maxBodyBytes;
        boolean https = upstream.getScheme().equalsIgnoreCase("https");
        int port = upstream.getPort() >= 0 ? upstream.getPort() : https ? 443 : 80;
        SslContext tls = https ? tls() : null;
        this.authority = upstream.getPort() < 0 ? upstream.getHost() : upstream.getHost() + ":" + port;
        long idleMillis = Math.max(IDLE.toMillis(), timeout.toMillis());
        this.bootstrap = new Bootstrap()
                .channel(NioSocketChannel.class)
                .remoteAddress(upstream.getHost(), port)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(timeout.toMillis(), 5_000))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        if (tls != null) {
                            channel.pipeline().addLast(tls.newHandler(channel.alloc(), upstream.getHost(), port));
                        }
                        channel.pipeline()
                                .addLast(new IdleStateHandler(0, 0, idleMillis, TimeUnit.MILLISECONDS))
                                .addLast(new HttpClientCodec(
                                        new HttpDecoderConfig()
                                                .setMaxInitialLineLength(MAX_RESPONSE_HEAD_BYTES)
                                                .setMaxHeaderSize(MAX_RESPONSE_HEAD_BYTES),
                                        false,
                                        false))
                                .addLast(new Answers());
                    }
                });
    }

    /** A client's TLS, trusting the JVM's certificate authorities and checking the upstream's host name. */
    private static SslContext tls() {
        try {
            return SslContextBuilder.forClient()
                    .endpointIdentificationAlgorithm("HTTPS")
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("TLS to the upstream cannot be set up: " + e.getMessage(), e);
        }
    }

    /** The upstream's host and port, as the Host header names it. */
    String authority() {
        return authority;
    }

    /** The path the upstream's URI starts with, without a trailing {@code /}; empty if none. */
    String pathPrefix() {
        String prefix = upstream.getRawPath() == null ? "" : upstream.getRawPath();
        return prefix.endsWith("/") ? prefix.substring(0, prefix.length() - 1) : prefix;
    }

    /** How long an exchange may take, from when its request is sent until its answer has come whole. */
    Duration timeout() {
        return timeout;
    }

    /** Says why the upstream could not be reached: the root cause's kind and message, such as ConnectException. */
    static String why(Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String kind = root instanceof ConnectException
                ? "ConnectException"
                : root.getClass().getSimpleName();
        return kind + (root.getMessage() == null ? "" : " (" + root.getMessage() + ")");
    }

    /** The largest request body forwarded, in bytes: a longer one is refused with 413. */
    long maxBodyBytes() {
        return maxBodyBytes;
    }

    /** The detail of the 413 that a body over {@link #maxBodyBytes} gets. */
    String tooLarge() {
        return "The body is larger than " + maxBodyBytes
                + " bytes, the most this proxy forwards (server.max-body-size).";
    }

    /**
     * Returns a connection for {@code exchange}, on {@code loop} (the caller's): an idle one of this loop's pool,
     * or a new one, connecting. Called on {@code loop} only.
     */
    ChannelFuture acquire(EventLoop loop) {
        ArrayDeque<Channel> pool = idle.get();
        for (Channel channel = pool.pollLast(); channel != null; channel = pool.pollLast()) {
            if (channel.isActive()) {
                return channel.newSucceededFuture();
            }
        }
        ChannelFuture connecting = bootstrap.clone(loop).connect();
        Channel channel = connecting.channel();
        channel.closeFuture().addListener(closed -> idle.get().remove(channel));
        return connecting;
    }

    /** Hands what {@code channel}, acquired here, receives to {@code exchange} until it is released. */
    static void attach(Channel channel, ProxiedExchange exchange) {
        channel.pipeline().get(Answers.class).exchange = exchange;
        channel.config().setAutoRead(true);
    }

    /**
     * Takes back a connection whose exchange is done, request and answer whole, to be used again by another
     * exchange of this loop. Called on the connection's loop only.
     */
    void release(Channel channel) {
        channel.pipeline().get(Answers.class).exchange = null;
        ArrayDeque<Channel> pool = idle.get();
        if (!channel.isActive() || pool.size() >= MAX_IDLE_PER_LOOP) {
            channel.close();
            return;
        }
        pool.addLast(channel);
    }

    /** Hands what the upstream sends to the exchange that uses the connection. */
    private static final class Answers extends ChannelInboundHandlerAdapter {

        private ProxiedExchange exchange;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            if (exchange == null) {
                ReferenceCountUtil.release(message); // an idle connection has nothing to say: it will not be used
                ctx.close();
                return;
            }
            exchange.fromUpstream(message);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
            if (exchange != null) {
                exchange.upstreamWritabilityChanged();
            }
            super.channelWritabilityChanged(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            ProxiedExchange closed = exchange;
            exchange = null;
            if (closed != null) {
                closed.upstreamClosed();
            }
            super.channelInactive(ctx);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
            if (event instanceof IdleStateEvent && exchange == null) {
                ctx.close(); // idle in the pool for too long; an exchange's own time is its timeout's
                return;
            }
            super.userEventTriggered(ctx, event);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
