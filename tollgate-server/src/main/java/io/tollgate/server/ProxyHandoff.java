package io.tollgate.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.tollgate.http.RequestDecision;
import io.tollgate.server.CheckApi.Answer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The proxy's part of an exchange, before the upstream: decides the request by the rules while the socket is not
 * read (what was read already waits in the exchange), then hands it to a {@link ProxiedExchange} or has the
 * refusal answered, and tells {@link Exchanges} when the upstream's part is over.
 *
 * <p>Not thread-safe: one per connection, called on its event loop only.
 */
final class ProxyHandoff {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /** How {@link Exchanges} writes an answer on the connection's loop. */
    interface Answering {
        void answer(ChannelHandlerContext ctx, Exchange exchange, CompletableFuture<Answer> pending);
    }

    /** How {@link Exchanges} ends an exchange whose answer is written and body read, and reads the next. */
    interface Finishing {
        void maybeEnd(ChannelHandlerContext ctx, Exchange exchange);
    }

    private final Endpoints endpoints;
    private final BooleanSupplier stopping;
    private final Answering answers;
    private final Finishing ends;

    ProxyHandoff(Endpoints endpoints, BooleanSupplier stopping, Answering answers, Finishing ends) {
        this.endpoints = endpoints;
        this.stopping = stopping;
        this.answers = answers;
        this.ends = ends;
    }

    /**
     * Decides a request for the upstream by the rules, then sends it on ({@link ProxiedExchange}) or answers the
     * refusal. The socket is not read while the decision is made; what was read already waits in {@code early}.
     */
    void proxy(ChannelHandlerContext ctx, Exchange exchange) {
        NettyRequestView view;
        try {
            view = NettyRequestView.of(
                    exchange.request,
                    ctx.channel().remoteAddress(),
                    endpoints.limits().get().requests().paths(),
                    exchange.normalPath);
        } catch (IllegalArgumentException malformed) {
            exchange.keepAlive = false;
            String detail = malformed.getMessage();
            answers.answer(
                    ctx,
                    exchange,
                    ExchangeAnswers.problem(400, detail.startsWith("The request") ? detail : "Bad Request: " + detail));
            return;
        }
        if (exchange.request.protocolVersion() == HttpVersion.HTTP_1_1
                && !exchange.request.headers().contains(HttpHeaderNames.HOST)) {
            exchange.keepAlive = false;
            answers.answer(
                    ctx,
                    exchange,
                    ExchangeAnswers.problem(400, "Bad Request: an HTTP/1.1 request needs a Host header."));
            return;
        }
        if (HttpUtil.getContentLength(exchange.request, -1L)
                > endpoints.upstreams().maxBodyBytes()) {
            discardBody(ctx, exchange);
            answers.answer(
                    ctx,
                    exchange,
                    ExchangeAnswers.problem(413, endpoints.upstreams().tooLarge()));
            return;
        }
        ctx.channel().config().setAutoRead(false);
        exchange.early = new ArrayList<>();
        exchange.answering = true;
        CompletionStage<RequestDecision> pending;
        try {
            pending = endpoints.limits().get().requests().decide(view);
        } catch (RuntimeException e) {
            pending = CompletableFuture.failedFuture(e);
        }
        pending.whenComplete((decision, failure) -> {
            if (ctx.executor().inEventLoop()) {
                decided(ctx, exchange, view, decision, failure);
            } else {
                ctx.executor().execute(() -> decided(ctx, exchange, view, decision, failure));
            }
        });
    }

    private void decided(
            ChannelHandlerContext ctx,
            Exchange exchange,
            NettyRequestView view,
            RequestDecision decision,
            Throwable failure) {
        List<HttpContent> early = exchange.early;
        exchange.early = null;
        Limits limits = endpoints.limits().get();
        if (exchange.ended || !ctx.channel().isActive()) {
            early.forEach(ReferenceCountUtil::release);
            if (decision != null && decision.allowed()) {
                limits.requests().finish(decision, 499, name -> null); // gives back what it holds
            }
            return;
        }
        if (failure == null && decision.allowed()) {
            exchange.proxy = new ProxiedExchange(
                    ctx,
                    exchange.request,
                    view,
                    decision,
                    endpoints.upstreams(),
                    endpoints.limits(),
                    endpoints.metrics(),
                    exchange.keepAlive && !stopping.getAsBoolean(),
                    ending(ctx, exchange));
            exchange.proxy.start(early);
            return;
        }
        early.forEach(ReferenceCountUtil::release);
        if (failure != null) {
            LOG.log(System.Logger.Level.WARNING, "the rate limiter failed; answering 500", failure);
        }
        discardBody(ctx, exchange);
        RequestDecision answer = failure != null ? RequestDecision.limiterFailed() : decision;
        answers.answer(ctx, exchange, CompletableFuture.completedFuture(Answer.of(answer)));
        if (failure == null) {
            limits.requests().finish(decision, decision.status(), decision.headers()::get);
        }
    }

    /** A body not wanted, if one is coming: read and thrown away, within bounds, then the connection closed. */
    private static void discardBody(ChannelHandlerContext ctx, Exchange exchange) {
        if (!exchange.bodyDone && ProxiedHeads.announcesBody(exchange.request)) {
            exchange.keepAlive = false;
            if (!HttpUtil.is100ContinueExpected(exchange.request)) {
                exchange.lingering = true;
                ctx.executor().schedule(() -> ctx.close(), CheckApi.LINGER_MAX_SECONDS, TimeUnit.SECONDS);
            }
            ctx.channel().config().setAutoRead(true);
        }
    }

    /** What a proxied exchange does with this connection once the upstream's part is over. */
    private ProxiedExchange.Ending ending(ChannelHandlerContext ctx, Exchange exchange) {
        return new ProxiedExchange.Ending() {
            @Override
            public void answered(int status, boolean close, boolean success) {
                endpoints
                        .metrics()
                        .answered(exchange.route.meterName(), status, System.nanoTime() - exchange.startNanos);
                exchange.answered = true;
                if (close || stopping.getAsBoolean()) {
                    ctx.close();
                    return;
                }
                if (!exchange.bodyDone) {
                    ctx.channel().config().setAutoRead(true); // the rest of a body the upstream did not wait for
                }
                ends.maybeEnd(ctx, exchange);
            }

            @Override
            public void answerInstead(Answer answer) {
                if (!exchange.bodyDone) {
                    exchange.keepAlive = false;
                }
                exchange.proxy = null;
                answers.answer(ctx, exchange, CompletableFuture.completedFuture(answer));
            }
        };
    }

    static void releaseEarly(Exchange exchange) {
        if (exchange.early != null) {
            exchange.early.forEach(ReferenceCountUtil::release);
            exchange.early = null;
        }
    }
}
