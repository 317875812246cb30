package io.tollgate.benchmarks;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The least an HTTP/1.1 server or proxy on the JVM does per exchange on this machine, to be driven by wrk
 * beside nginx (docs/benchmarks.md, issue #17). Two kinds of mode:
 *
 * <ul>
 *   <li>{@code jetty} and {@code netty}: a server that answers every request {@code 200 ok} and nothing else,
 *       on Jetty (as Tollgate's server is built) or on Netty's HTTP codec, beside nginx's {@code return 200};
 *   <li>{@code jetty-proxy}, {@code jetty-netty-proxy} and {@code netty-proxy}: a proxy to an upstream that
 *       does nothing but forward, beside nginx's {@code proxy_pass}: Jetty's {@code ProxyHandler} with the
 *       HTTP/1.1 client Tollgate's proxy uses; Jetty's server with Netty's HTTP client (pooled keep-alive
 *       connections on their own event loops); Netty on both sides, each client connection with its own
 *       upstream connection on the same event loop, so that an exchange never changes threads.
 * </ul>
 *
 * <p>None of them is a proxy to use: no limits, no hop-by-hop handling, no errors answered, only what a
 * forwarding path cannot do without. They tell where the ceiling of each design lies.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.HttpStackCeiling
 * MODE PORT [UPSTREAM_PORT]}, then {@code wrk -t1 -c64 -d10s http://127.0.0.1:PORT/}. Listens on 127.0.0.1
 * until killed; {@code -Dloops=N} sets the number of Netty event loops (default: two per core).
 */
public final class HttpStackCeiling {

    private static final byte[] OK = "ok".getBytes(StandardCharsets.US_ASCII);
    private static final AttributeKey<Exchange> EXCHANGE = AttributeKey.valueOf("exchange");

    private HttpStackCeiling() {}

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "";
        int arity = mode.endsWith("-proxy") ? 3 : 2;
        if (args.length != arity
                || !Set.of("jetty", "netty", "jetty-proxy", "jetty-netty-proxy", "netty-proxy")
                        .contains(mode)) {
            System.err.println("usage: HttpStackCeiling jetty|netty PORT"
                    + " | HttpStackCeiling jetty-proxy|jetty-netty-proxy|netty-proxy PORT UPSTREAM_PORT");
            System.exit(2);
        }
        int port = Integer.parseInt(args[1]);
        switch (mode) {
            case "jetty" -> jetty(port);
            case "netty" -> netty(port);
            case "jetty-proxy" -> jettyProxy(port, Integer.parseInt(args[2]));
            case "jetty-netty-proxy" -> jettyNettyProxy(port, Integer.parseInt(args[2]));
            default -> nettyProxy(port, Integer.parseInt(args[2]));
        }
    }

    /** Jetty 12 with the settings of Tollgate's server and a handler that only answers. */
    private static void jetty(int port) throws Exception {
        Server server = jettyServer(port);
        server.setHandler(new Handler.Abstract.NonBlocking() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                response.setStatus(200);
                response.getHeaders().put("Content-Type", "text/plain");
                response.getHeaders().put("Content-Length", OK.length);
                response.write(true, ByteBuffer.wrap(OK), callback);
                return true;
            }
        });
        server.start();
        System.out.println("jetty answering on 127.0.0.1:" + port);
        server.join();
    }

    /** A Jetty server on 127.0.0.1 with the settings of Tollgate's, its handler still to be set. */
    private static Server jettyServer(int port) {
        Server server = new Server(new QueuedThreadPool());
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);
        return server;
    }

    /** Jetty's ProxyHandler with the HTTP/1.1 client Tollgate's proxy uses, and no limiter. */
    private static void jettyProxy(int port, int upstream) throws Exception {
        Server server = jettyServer(port);
        server.setHandler(
                new ProxyHandler.Reverse(request -> HttpURI.build(request.getHttpURI())
                        .scheme("http")
                        .host("127.0.0.1")
                        .port(upstream)
                        .asImmutable()) {
                    @Override
                    protected HttpClient newHttpClient() {
                        ClientConnector connector = new ClientConnector();
                        connector.setExecutor(new QueuedThreadPool());
                        HttpClient client = new HttpClient(new HttpClientTransportOverHTTP(connector));
                        client.setMaxConnectionsPerDestination(1_024);
                        return client;
                    }
                });
        server.start();
        System.out.println("jetty proxying 127.0.0.1:" + port + " to " + upstream);
        server.join();
    }

    /** Jetty's server in front, Netty's HTTP client to the upstream, keep-alive connections in a pool. */
    private static void jettyNettyProxy(int port, int upstream) throws Exception {
        EventLoopGroup loops =
                new MultiThreadIoEventLoopGroup(Integer.getInteger("loops", 0), NioIoHandler.newFactory());
        ConcurrentLinkedQueue<Channel> idle = new ConcurrentLinkedQueue<>();
        Bootstrap client = new Bootstrap()
                .group(loops)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channel.pipeline()
                                .addLast(new HttpClientCodec(), new HttpObjectAggregator(1 << 20), new Answered(idle));
                    }
                });
        Server server = jettyServer(port);
        server.setHandler(new Handler.Abstract.NonBlocking() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                DefaultFullHttpRequest out = new DefaultFullHttpRequest(
                        HttpVersion.HTTP_1_1,
                        HttpMethod.valueOf(request.getMethod()),
                        request.getHttpURI().getPathQuery());
                request.getHeaders().forEach(field -> out.headers().add(field.getName(), field.getValue()));
                out.headers().set("X-Forwarded-For", Request.getRemoteAddr(request));
                Exchange exchange = new Exchange(response, callback);
                Channel channel = idle.poll();
                if (channel != null && channel.isActive()) {
                    channel.attr(EXCHANGE).set(exchange);
                    channel.writeAndFlush(out);
                } else {
                    client.connect("127.0.0.1", upstream).addListener((ChannelFutureListener) connected -> {
                        if (connected.isSuccess()) {
                            connected.channel().attr(EXCHANGE).set(exchange);
                            connected.channel().writeAndFlush(out);
                        } else {
                            callback.failed(connected.cause());
                        }
                    });
                }
                return true;
            }
        });
        server.start();
        System.out.println("jetty with netty's client proxying 127.0.0.1:" + port + " to " + upstream);
        server.join();
    }

    /** A request of Jetty's waiting for its answer on an upstream connection. */
    private record Exchange(Response response, Callback callback) {}

    /** Copies an upstream answer into the Jetty response waiting for it, and gives the connection back. */
    private static final class Answered extends SimpleChannelInboundHandler<FullHttpResponse> {
        private final ConcurrentLinkedQueue<Channel> idle;

        Answered(ConcurrentLinkedQueue<Channel> idle) {
            this.idle = idle;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext context, FullHttpResponse answer) {
            Exchange exchange = context.channel().attr(EXCHANGE).getAndSet(null);
            Response response = exchange.response();
            response.setStatus(answer.status().code());
            answer.headers().forEach(header -> response.getHeaders().add(header.getKey(), header.getValue()));
            ByteBuffer body = ByteBuffer.allocate(answer.content().readableBytes());
            answer.content().readBytes(body);
            idle.offer(context.channel());
            response.write(true, body.flip(), exchange.callback());
        }
    }

    /** Netty both sides: each client connection gets its own upstream connection on the same event loop. */
    private static void nettyProxy(int port, int upstream) throws Exception {
        EventLoopGroup loops =
                new MultiThreadIoEventLoopGroup(Integer.getInteger("loops", 0), NioIoHandler.newFactory());
        try {
            Channel channel = new ServerBootstrap()
                    .group(loops)
                    .channel(NioServerSocketChannel.class)
                    .childOption(ChannelOption.AUTO_READ, false)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            channel.pipeline().addLast(new HttpServerCodec(), new Front(upstream));
                        }
                    })
                    .bind("127.0.0.1", port)
                    .sync()
                    .channel();
            System.out.println("netty proxying 127.0.0.1:" + port + " to " + upstream);
            channel.closeFuture().sync();
        } finally {
            loops.shutdownGracefully();
        }
    }

    /**
     * A client connection: opens its upstream connection on its own event loop, reads the client only once
     * that is open, and writes what it reads there, with the client's address in {@code X-Forwarded-For}.
     */
    private static final class Front extends ChannelInboundHandlerAdapter {
        private final int upstream;
        private Channel back;

        Front(int upstream) {
            this.upstream = upstream;
        }

        @Override
        public void channelActive(ChannelHandlerContext context) {
            Channel front = context.channel();
            new Bootstrap()
                    .group(front.eventLoop())
                    .channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            channel.pipeline().addLast(new HttpClientCodec(), new Back(front));
                        }
                    })
                    .connect("127.0.0.1", upstream)
                    .addListener((ChannelFutureListener) connected -> {
                        if (connected.isSuccess()) {
                            back = connected.channel();
                            front.read();
                        } else {
                            front.close();
                        }
                    });
        }

        @Override
        public void channelRead(ChannelHandlerContext context, Object message) {
            if (message instanceof HttpRequest request) {
                request.headers().set("X-Forwarded-For", peer(context.channel()));
            }
            back.write(message);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext context) {
            back.flush();
            context.read();
        }

        @Override
        public void channelInactive(ChannelHandlerContext context) {
            if (back != null) {
                back.close();
            }
        }
    }

    private static String peer(Channel channel) {
        return ((InetSocketAddress) channel.remoteAddress()).getAddress().getHostAddress();
    }

    /** An upstream connection: writes what the upstream answers to its client connection. */
    private static final class Back extends ChannelInboundHandlerAdapter {
        private final Channel front;

        Back(Channel front) {
            this.front = front;
        }

        @Override
        public void channelRead(ChannelHandlerContext context, Object message) {
            front.write(message);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext context) {
            front.flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext context) {
            front.close();
        }
    }

    /** Netty's HTTP/1.1 codec on one event loop per core, answering each request as it is parsed. */
    private static void netty(int port) throws Exception {
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
        try {
            Channel channel = new ServerBootstrap()
                    .group(loops)
                    .channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            channel.pipeline().addLast(new HttpServerCodec(), new Answer());
                        }
                    })
                    .bind("127.0.0.1", port)
                    .sync()
                    .channel();
            System.out.println("netty answering on 127.0.0.1:" + port);
            channel.closeFuture().sync();
        } finally {
            loops.shutdownGracefully();
        }
    }

    /** Answers {@code 200 ok} to each request, keeping the connection open when the client asks to. */
    private static final class Answer extends SimpleChannelInboundHandler<HttpObject> {
        private static final ByteBuf BODY = Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(OK));

        @Override
        protected void channelRead0(ChannelHandlerContext context, HttpObject message) {
            if (message instanceof HttpRequest request) {
                FullHttpResponse response =
                        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, BODY.duplicate());
                response.headers()
                        .set(HttpHeaderNames.CONTENT_TYPE, "text/plain")
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, OK.length);
                HttpUtil.setKeepAlive(response, HttpUtil.isKeepAlive(request));
                context.write(response);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext context) {
            context.flush();
        }
    }
}
