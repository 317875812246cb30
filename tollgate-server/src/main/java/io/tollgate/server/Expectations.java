package io.tollgate.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;

/**
 * The {@code Expect} header field, on the connection's pipeline: {@code 100-continue} is the only expectation
 * supported (whether the {@code 100} is sent is {@link RequestBodies}'s to say, by the body it wants); another is
 * answered 417, and the connection closed after it, as its body was neither sent nor will be read.
 *
 * <p>Stateless; one per connection, as every handler of the pipeline is.
 */
final class Expectations extends ChannelInboundHandlerAdapter {

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (message instanceof Exchange exchange) {
            String expectation = exchange.request.headers().get(HttpHeaderNames.EXPECT);
            if (expectation != null && !expectation.equalsIgnoreCase("100-continue")) {
                exchange.keepAlive = false;
                Reply.send(
                        ctx,
                        exchange,
                        ExchangeAnswers.problem(417, "Expectation Failed: only 100-continue is supported."));
                return;
            }
        }
        ctx.fireChannelRead(message);
    }
}
