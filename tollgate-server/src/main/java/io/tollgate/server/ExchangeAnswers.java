package io.tollgate.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.tollgate.http.RequestDecision;
import io.tollgate.server.CheckApi.Answer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The answers {@link Exchanges} gives of its own (problems: a request that could not be read, a method not
 * allowed), how it reads a raw path, and how it closes a connection whose request could not be read.
 */
final class ExchangeAnswers {

    /** How long a connection whose request could not be read is read on after its answer, in milliseconds. */
    static final long UNREADABLE_LINGER_MILLIS = 2_000;

    private ExchangeAnswers() {}

    /** The path of a request target as sent, escapes and all. */
    static String rawPath(String target) {
        String origin = NettyRequestView.originForm(target);
        int question = origin.indexOf('?');
        return question < 0 ? origin : origin.substring(0, question);
    }

    /**
     * Closes a connection whose request could not be read: says so with a FIN, then reads (the decoder throws
     * away) what the client still sends for up to {@value #UNREADABLE_LINGER_MILLIS} ms, or until it closes its
     * side. Closing at once with bytes unread would make the kernel reset the connection, and a client still
     * writing a request over the header limit could lose the 431 it is being sent.
     */
    static void closeGently(ChannelHandlerContext ctx) {
        if (!(ctx.channel() instanceof SocketChannel socket)) {
            ctx.close();
            return;
        }
        socket.config().setAutoRead(true);
        socket.shutdownOutput().addListener(shut -> {
            if (!shut.isSuccess()) {
                ctx.close();
                return;
            }
            ctx.executor().schedule(() -> ctx.close(), UNREADABLE_LINGER_MILLIS, TimeUnit.MILLISECONDS);
        });
    }

    static CompletableFuture<Answer> methodNotAllowed(Exchange exchange, String... allowed) {
        return CompletableFuture.completedFuture(
                Answer.methodNotAllowed(exchange.path, exchange.request.method().name(), allowed));
    }

    static CompletableFuture<Answer> problem(int status, String detail) {
        return CompletableFuture.completedFuture(Answer.of(RequestDecision.problem(status, detail)));
    }

    /** The answer to a request the decoder could not read: 414, 431 or 400, each a problem. */
    static Answer badMessage(Throwable cause) {
        if (cause instanceof TooLongHttpLineException) {
            return Answer.of(RequestDecision.problem(414, "URI Too Long."));
        }
        if (cause instanceof TooLongHttpHeaderException) {
            return Answer.of(RequestDecision.problem(431, "Request Header Fields Too Large."));
        }
        String message = cause == null ? null : cause.getMessage();
        return Answer.of(RequestDecision.problem(
                400, message == null || message.isBlank() ? "Bad Request." : "Bad Request: " + message));
    }

    /**
     * Returns {@code answer} as a whole response: in HTTP/1.0 if the client spoke it, with no body for a {@code
     * HEAD}, its length and date set, and {@code Connection} as {@code close} says.
     */
    static FullHttpResponse response(Answer answer, boolean head, boolean http10, boolean close) {
        FullHttpResponse response = new DefaultFullHttpResponse(
                http10 ? HttpVersion.HTTP_1_0 : HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(answer.status()),
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(answer.body()),
                Exchanges.RESPONSE_HEADERS,
                DefaultHttpHeadersFactory.trailersFactory());
        answer.headers().forEach(response.headers()::set);
        response.headers().set(HttpHeaderNames.CONTENT_LENGTH, answer.body().length);
        response.headers().set(HttpHeaderNames.DATE, HttpDate.now());
        HttpUtil.setKeepAlive(response, !close);
        return response;
    }
}
