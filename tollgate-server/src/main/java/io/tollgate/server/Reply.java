package io.tollgate.server;

import io.netty.channel.ChannelHandlerContext;
import io.tollgate.server.CheckApi.Answer;
import java.util.concurrent.CompletableFuture;

/**
 * An exchange's answer, once it is known: written outbound by the handler that made it, and sent on the connection
 * by {@link Exchanges}, which knows how the connection goes on.
 *
 * @param exchange the exchange answered
 * @param answer completes with the answer, on any thread
 */
record Reply(Exchange exchange, CompletableFuture<Answer> answer) {

    /** Answers {@code exchange} with {@code answer} on {@code ctx}'s connection; call it on the connection's loop. */
    static void send(ChannelHandlerContext ctx, Exchange exchange, CompletableFuture<Answer> answer) {
        exchange.answering = true;
        ctx.write(new Reply(exchange, answer));
    }

    /** Tells {@link Exchanges} that the exchange may be over: its answer written and its body read. */
    record MayEnd(Exchange exchange) {

        /** Fires it from the head of {@code ctx}'s pipeline, where {@link Exchanges} sees it. */
        static void fire(ChannelHandlerContext ctx, Exchange exchange) {
            ctx.pipeline().fireUserEventTriggered(new MayEnd(exchange));
        }
    }
}
