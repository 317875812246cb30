package io.tollgate.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpUtil;
import io.tollgate.server.CheckApi.Answer;
import io.tollgate.server.internal.access.Callers;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Who may ask, on the connection's pipeline: the management port's routes need its bearer token, and the decision
 * API the token or client certificate of one of the file's callers, where it names callers; anyone else is answered
 * 401 with {@code WWW-Authenticate} before a byte of the body is read. An exchange that passes goes on with its
 * caller named.
 *
 * <p>Not thread-safe: one per connection, called on its event loop only.
 */
final class Authentication extends ChannelInboundHandlerAdapter {

    private final Endpoints endpoints;

    Authentication(Endpoints endpoints) {
        this.endpoints = endpoints;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (message instanceof Exchange exchange && !admitted(ctx, exchange)) {
            return;
        }
        ctx.fireChannelRead(message);
    }

    private boolean admitted(ChannelHandlerContext ctx, Exchange exchange) {
        if (exchange.route.guarded() && !endpoints.authorizes(exchange.request)) {
            refuse(
                    ctx,
                    exchange,
                    "The management port needs the bearer token of server.management-token: send Authorization:"
                            + " Bearer TOKEN.",
                    "tollgate management");
            return false;
        }
        return !exchange.route.decisionApi() || identifyCaller(ctx, exchange);
    }

    /**
     * Names the caller of a decision API request where the file names callers, by its bearer token or its client
     * certificate; answers 401 and returns false for a request that names none.
     */
    private boolean identifyCaller(ChannelHandlerContext ctx, Exchange exchange) {
        Callers callers = endpoints.limits().get().config().callers();
        if (!callers.required()) {
            return true;
        }
        String authorization = exchange.request.headers().get(HttpHeaderNames.AUTHORIZATION);
        exchange.caller = callers.identify(authorization, PeerCertificates.subject(ctx.channel()));
        if (exchange.caller != null) {
            return true;
        }
        String detail = authorization == null
                ? "The decision API needs a caller's bearer token: send Authorization: Bearer TOKEN."
                : "The bearer token is not one of the callers' tokens.";
        endpoints.callerEvents().unauthenticated(exchange.route.meterName(), detail);
        refuse(ctx, exchange, detail, "tollgate decision api");
        return false;
    }

    private static void refuse(ChannelHandlerContext ctx, Exchange exchange, String detail, String realm) {
        if (HttpUtil.is100ContinueExpected(exchange.request)) {
            exchange.keepAlive = false; // the client waits to send its body, which is not wanted
        }
        Answer problem = Answer.problem(401, detail);
        Map<String, String> headers = new LinkedHashMap<>(problem.headers());
        headers.put("WWW-Authenticate", "Bearer realm=\"" + realm + "\"");
        Reply.send(ctx, exchange, CompletableFuture.completedFuture(new Answer(401, headers, problem.body())));
    }
}
