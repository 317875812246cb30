package io.tollgate.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.tollgate.server.CheckApi.Answer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * The last of the connection's pipeline: answers an exchange that passed the others by its {@link Route}: the
 * decision API with its body, the proxy (through {@link ProxyHandoff}), forward-auth, health, metrics, the live page,
 * the admin API, or a 404 that says where the endpoint is. Blocking work (the meters' scrape, the admin API) runs off
 * the event loop.
 *
 * <p>Not thread-safe: one per connection, called on its event loop only.
 */
final class Routing extends ChannelInboundHandlerAdapter {

    private final Endpoints endpoints;
    private final ProxyHandoff proxying;

    Routing(Endpoints endpoints, BooleanSupplier stopping) {
        this.endpoints = endpoints;
        this.proxying = new ProxyHandoff(endpoints, stopping, Reply::send, Reply.MayEnd::fire);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (!(message instanceof Exchange exchange)) {
            ctx.fireChannelRead(message);
            return;
        }
        if (exchange.route == Route.PROXY) {
            proxying.proxy(ctx, exchange);
        } else if (exchange.body != null) {
            byte[] body = exchange.body.toByteArray();
            exchange.body = null;
            Limits limits = endpoints.limits().get();
            Reply.send(
                    ctx,
                    exchange,
                    exchange.route == Route.CHECK
                            ? limits.checks().answer(body, ctx.executor(), exchange.caller)
                            : limits.checks().charge(body, ctx.executor(), exchange.caller));
        } else {
            Reply.send(ctx, exchange, answerWithoutBody(ctx, exchange));
        }
    }

    private CompletableFuture<Answer> answerWithoutBody(ChannelHandlerContext ctx, Exchange exchange) {
        HttpMethod method = exchange.request.method();
        boolean get = method == HttpMethod.GET || method == HttpMethod.HEAD;
        return switch (exchange.route) {
            case CHECK, CHARGE -> ExchangeAnswers.methodNotAllowed(exchange, "POST");
            case FORWARD_AUTH ->
                ForwardAuth.answer(
                                exchange.request,
                                ctx.channel().remoteAddress(),
                                endpoints.limits().get())
                        .toCompletableFuture();
            case HEALTH ->
                get
                        ? endpoints.readiness().answer(exchange.path)
                        : ExchangeAnswers.methodNotAllowed(exchange, "GET", "HEAD");
            case METRICS ->
                get
                        ? CompletableFuture.supplyAsync(
                                () -> new Answer(
                                        200,
                                        Map.of("Content-Type", Exchanges.PROMETHEUS_TEXT),
                                        endpoints.metrics().scrape().getBytes(StandardCharsets.UTF_8)),
                                endpoints.blocking())
                        : ExchangeAnswers.methodNotAllowed(exchange, "GET", "HEAD");
            case PAGE ->
                get
                        ? CompletableFuture.completedFuture(ManagementPage.answer(exchange.path))
                        : ExchangeAnswers.methodNotAllowed(exchange, "GET", "HEAD");
            case ADMIN -> {
                Map<String, List<String>> parameters;
                try {
                    parameters = new QueryStringDecoder(exchange.request.uri()).parameters();
                } catch (IllegalArgumentException malformed) { // such as a % that starts no escape
                    yield ExchangeAnswers.problem(400, "Bad Request: " + malformed.getMessage());
                }
                yield CompletableFuture.supplyAsync(
                        () -> endpoints.admin().answer(method.name(), exchange.path, parameters), endpoints.blocking());
            }
            case NONE, PROXY, BAD_REQUEST ->
                ExchangeAnswers.problem(
                        404, Routes.noSuchEndpoint(exchange.path, endpoints.port(), endpoints.exposure()));
        };
    }
}
