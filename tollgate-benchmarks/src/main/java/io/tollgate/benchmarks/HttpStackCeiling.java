package io.tollgate.benchmarks;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
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
 * The least an HTTP/1.1 server on the JVM does per exchange on this machine: a server that answers every
 * request {@code 200 ok} and nothing else, on Jetty (as Tollgate's server is built) or on Netty, to be driven
 * by wrk beside nginx's {@code return 200}. It tells how far a proxy on either stack could go, since a proxy
 * makes two such exchanges per request (docs/benchmarks.md, issue #17).
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.HttpStackCeiling
 * jetty|netty PORT}, then {@code wrk -t1 -c64 -d10s http://127.0.0.1:PORT/}. Listens on 127.0.0.1 until
 * killed.
 */
public final class HttpStackCeiling {

    private static final byte[] OK = "ok".getBytes(StandardCharsets.US_ASCII);

    private HttpStackCeiling() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("jetty") || args[0].equals("netty"))) {
            System.err.println("usage: HttpStackCeiling jetty|netty PORT");
            System.exit(2);
        }
        int port = Integer.parseInt(args[1]);
        if (args[0].equals("jetty")) {
            jetty(port);
        } else {
            netty(port);
        }
    }

    /** Jetty 12 with the settings of Tollgate's server and a handler that only answers. */
    private static void jetty(int port) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool();
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);
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
