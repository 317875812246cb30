package io.tollgate.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.util.concurrent.TimeUnit;

/**
 * The bodies the server reads itself, on the connection's pipeline: the decision API's, up to {@value
 * CheckApi#MAX_BODY_BYTES} bytes, read whole before the exchange goes on; past that the answer is a 413, and the rest
 * of the body is read and thrown away (up to {@value CheckApi#LINGER_MAX_BYTES} bytes and {@value
 * CheckApi#LINGER_MAX_SECONDS} seconds) so that a client still writing it reads the 413, then the connection is
 * closed. {@code Expect: 100-continue} gets its {@code 100} only where a body is wanted and its announced length fits;
 * elsewhere the connection closes after the answer, as the body it holds back is not wanted. The proxy's bodies are
 * streamed to the upstream, and pass.
 *
 * <p>Not thread-safe: one per connection, called on its event loop only.
 */
final class RequestBodies extends ChannelInboundHandlerAdapter {

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (message instanceof Exchange exchange) {
            begin(ctx, exchange);
        } else if (message instanceof Body body) {
            try {
                read(ctx, body.exchange(), body.content());
            } finally {
                ReferenceCountUtil.release(body.content());
            }
        } else {
            ctx.fireChannelRead(message);
        }
    }

    /**
     * A chunk of an exchange's body that this handler reads, passed on by {@link Exchanges} (retained: the reader
     * releases it).
     */
    record Body(Exchange exchange, HttpContent content) {}

    private static void begin(ChannelHandlerContext ctx, Exchange exchange) {
        if (exchange.route == Route.PROXY) {
            ctx.fireChannelRead(exchange); // its body is streamed to the upstream
            return;
        }
        boolean expectsContinue = HttpUtil.is100ContinueExpected(exchange.request);
        if (exchange.route.decisionApi() && exchange.request.method() == HttpMethod.POST) {
            if (HttpUtil.getContentLength(exchange.request, -1L) > CheckApi.MAX_BODY_BYTES) {
                tooLarge(ctx, exchange, !expectsContinue);
                return;
            }
            if (expectsContinue) {
                ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
            }
            exchange.body = new ByteArrayOutputStream();
            return; // goes on once the body is read
        }
        if (expectsContinue) {
            exchange.keepAlive = false; // the client waits to send its body, which is not wanted
        }
        ctx.fireChannelRead(exchange);
    }

    private static void read(ChannelHandlerContext ctx, Exchange exchange, HttpContent content) {
        ByteBuf bytes = content.content();
        int readable = bytes.readableBytes();
        if (exchange.body.size() + readable > CheckApi.MAX_BODY_BYTES) {
            exchange.body = null;
            tooLarge(ctx, exchange, true);
            exchange.discarded += readable;
            return;
        }
        byte[] read = new byte[readable];
        bytes.readBytes(read);
        exchange.body.writeBytes(read);
        if (content instanceof LastHttpContent && !exchange.answering) {
            ctx.fireChannelRead(exchange); // read whole: answered with it
        }
    }

    /**
     * Answers 413 and closes the connection once the answer is written and, when {@code linger}, the body read
     * and thrown away, within bounds.
     */
    private static void tooLarge(ChannelHandlerContext ctx, Exchange exchange, boolean linger) {
        exchange.keepAlive = false;
        exchange.lingering = linger;
        if (linger) {
            ctx.executor().schedule(() -> ctx.close(), CheckApi.LINGER_MAX_SECONDS, TimeUnit.SECONDS);
        }
        Reply.send(ctx, exchange, ExchangeAnswers.problem(413, CheckApi.TOO_LARGE));
    }
}
