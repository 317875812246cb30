package io.tollgate.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.tollgate.http.RequestDecision;
import io.tollgate.server.CheckApi.Answer;
import io.tollgate.server.internal.access.Callers;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The exchanges of one connection of the {@link DataPlane}, one at a time, on the connection's event loop: reads
 * a request, answers it (the decision API, the proxy, health, metrics, the admin API on the management port behind
 * its token, or a problem), and reads the next once the answer is written and the request's body read. Requests
 * a client pipelines meanwhile wait, unread, in order; the socket is not read while they do, so a client that never reads its answers fills its own buffers, not this
 * process's memory.
 *
 * <p>The decision API's body is read as it arrives, up to {@value CheckApi#MAX_BODY_BYTES} bytes; past that the
 * answer is a 413, after which the rest of the body is read and thrown away (up to {@value
 * CheckApi#LINGER_MAX_BYTES} bytes and {@value CheckApi#LINGER_MAX_SECONDS} seconds) so that a client still
 * writing it reads the 413, and the connection is closed. {@code Expect: 100-continue} gets its {@code 100} only
 * where a body is wanted and its announced length fits; another expectation gets 417.
 *
 * <p>Not thread-safe: one per connection, called on its event loop only.
 */
final class Exchanges extends ChannelInboundHandlerAdapter {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /**
     * The answers' header fields: names are this server's own (the decision's fields, constants), so checking
     * each as a token on every answer, a twentieth of a {@code /healthz} answer's time, is skipped; values are
     * still checked.
     */
    static final HttpHeadersFactory RESPONSE_HEADERS =
            DefaultHttpHeadersFactory.headersFactory().withNameValidation(false);

    /** The Content-Type of Prometheus's text format, which {@code /metrics} answers in. */
    static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final Endpoints endpoints;
    private final AtomicInteger inFlight;
    private final BooleanSupplier stopping;
    private final ArrayDeque<Object> waiting = new ArrayDeque<>();
    private final ProxyHandoff proxying;
    private Exchange current;

    Exchanges(Endpoints endpoints, AtomicInteger inFlight, BooleanSupplier stopping) {
        this.endpoints = endpoints;
        this.inFlight = inFlight;
        this.stopping = stopping;
        this.proxying = new ProxyHandoff(endpoints, stopping, this::answer, this::maybeEnd);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (current != null && current.bodyDone) {
            // A pipelined request: it waits for this one's answer, and the socket is not read meanwhile
            waiting.add(message);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        try {
            if (message instanceof HttpRequest request) {
                begin(ctx, request);
            }
            if (message instanceof HttpContent content && current != null) {
                content(ctx, content);
            }
        } finally {
            ReferenceCountUtil.release(message);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof IdleStateEvent) {
            if (current != null && current.proxy != null) {
                return; // waiting for the upstream, whose own timeout (server.upstream-timeout) bounds the wait
            }
            ctx.close(); // neither a byte sent nor one taken for the idle timeout
            return;
        }
        super.userEventTriggered(ctx, event);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (current != null && current.proxy != null) {
            current.proxy.clientWritabilityChanged();
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (current != null) {
            if (current.proxy != null) {
                current.proxy.clientClosed();
            }
            ProxyHandoff.releaseEarly(current);
            end(current);
        }
        waiting.forEach(ReferenceCountUtil::release);
        waiting.clear();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.log(System.Logger.Level.DEBUG, "tollgate: a connection failed; closing it", cause);
        ctx.close();
    }

    private void begin(ChannelHandlerContext ctx, HttpRequest request) {
        DecoderResult decoded = request.decoderResult();
        if (decoded.isFailure()) {
            current = started(new Exchange(request, Route.BAD_REQUEST, "", false));
            current.bodyDone = true; // the decoder reads nothing more from this connection
            current.unreadable = true;
            answer(ctx, current, CompletableFuture.completedFuture(ExchangeAnswers.badMessage(decoded.cause())));
            return;
        }
        String path;
        try {
            // The admin API reads its keys percent-encoded, as sent; the public port's routes are decoded paths
            path = endpoints.isManagementPort()
                    ? ExchangeAnswers.rawPath(request.uri())
                    : new QueryStringDecoder(request.uri()).path();
        } catch (IllegalArgumentException malformed) {
            current = started(new Exchange(request, Route.BAD_REQUEST, "", false));
            answer(ctx, current, ExchangeAnswers.problem(400, "Bad Request: " + malformed.getMessage()));
            return;
        }
        Route route = endpoints.route(path);
        Exchange exchange = started(new Exchange(request, route, path, HttpUtil.isKeepAlive(request)));
        current = exchange;
        if (route.guarded() && !endpoints.authorizes(request)) {
            if (HttpUtil.is100ContinueExpected(request)) {
                exchange.keepAlive = false; // the client waits to send its body, which is not wanted
            }
            Answer problem = Answer.problem(
                    401,
                    "The management port needs the bearer token of server.management-token: send Authorization:"
                            + " Bearer TOKEN.");
            Map<String, String> headers = new LinkedHashMap<>(problem.headers());
            headers.put("WWW-Authenticate", "Bearer realm=\"tollgate management\"");
            answer(ctx, exchange, CompletableFuture.completedFuture(new Answer(401, headers, problem.body())));
            return;
        }
        if (route.decisionApi() && !identifyCaller(ctx, exchange)) {
            return;
        }
        String expectation = request.headers().get(HttpHeaderNames.EXPECT);
        if (expectation != null && !expectation.equalsIgnoreCase("100-continue")) {
            exchange.keepAlive = false; // its body, if any, was not sent and will not be read
            answer(ctx, exchange, ExchangeAnswers.problem(417, "Expectation Failed: only 100-continue is supported."));
            return;
        }
        if (route == Route.PROXY) {
            proxying.proxy(ctx, exchange);
            return;
        }
        boolean expectsContinue = HttpUtil.is100ContinueExpected(request);
        boolean wantsBody = route.decisionApi() && request.method() == HttpMethod.POST;
        if (wantsBody) {
            if (HttpUtil.getContentLength(request, -1L) > CheckApi.MAX_BODY_BYTES) {
                tooLarge(ctx, exchange, !expectsContinue);
                return;
            }
            if (expectsContinue) {
                ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
            }
            exchange.body = new ByteArrayOutputStream();
            return; // answered once the body is read
        }
        if (expectsContinue) {
            exchange.keepAlive = false; // the client waits to send its body, which is not wanted
        }
        answer(ctx, exchange, answerWithoutBody(ctx, exchange));
    }

    /**
     * Names the caller of a decision API request where the file names callers, by its bearer token or its client
     * certificate; answers 401 and returns false for a request that names none, before its body is read.
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
        if (HttpUtil.is100ContinueExpected(exchange.request)) {
            exchange.keepAlive = false; // the client waits to send its body, which is not wanted
        }
        Answer problem = Answer.problem(401, detail);
        Map<String, String> headers = new LinkedHashMap<>(problem.headers());
        headers.put("WWW-Authenticate", "Bearer realm=\"tollgate decision api\"");
        answer(ctx, exchange, CompletableFuture.completedFuture(new Answer(401, headers, problem.body())));
        return false;
    }

    private Exchange started(Exchange exchange) {
        inFlight.incrementAndGet();
        return exchange;
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
                                        Map.of("Content-Type", PROMETHEUS_TEXT),
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

    private void content(ChannelHandlerContext ctx, HttpContent content) {
        Exchange exchange = current;
        if (exchange.early != null || exchange.proxy != null) {
            if (content.decoderResult().isFailure()) {
                ctx.close(); // the body cannot be read on: neither can the upstream's copy of it
                return;
            }
            if (exchange.early != null) {
                exchange.early.add(content.retain());
            } else {
                exchange.proxy.fromClient(content.retain());
            }
            if (content instanceof LastHttpContent) {
                exchange.bodyDone = true;
                maybeEnd(ctx, exchange);
            }
            return;
        }
        ByteBuf bytes = content.content();
        if (exchange.body != null) {
            int readable = bytes.readableBytes();
            if (exchange.body.size() + readable > CheckApi.MAX_BODY_BYTES) {
                exchange.body = null;
                tooLarge(ctx, exchange, true);
                exchange.discarded += readable;
            } else {
                byte[] read = new byte[readable];
                bytes.readBytes(read);
                exchange.body.writeBytes(read);
            }
        } else {
            exchange.discarded += bytes.readableBytes();
        }
        boolean last = content instanceof LastHttpContent;
        if (content.decoderResult().isFailure()) {
            exchange.keepAlive = false;
            exchange.lingering = false;
            last = true;
            if (!exchange.answering) {
                exchange.body = null;
                answer(
                        ctx,
                        exchange,
                        CompletableFuture.completedFuture(ExchangeAnswers.badMessage(
                                content.decoderResult().cause())));
            }
        }
        if (exchange.lingering && exchange.discarded >= CheckApi.LINGER_MAX_BYTES) {
            ctx.close();
            return;
        }
        if (!last) {
            return;
        }
        exchange.bodyDone = true;
        if (exchange.body != null && !exchange.answering) {
            byte[] body = exchange.body.toByteArray();
            exchange.body = null;
            Limits limits = endpoints.limits().get();
            answer(
                    ctx,
                    exchange,
                    exchange.route == Route.CHECK
                            ? limits.checks().answer(body, ctx.executor(), exchange.caller)
                            : limits.checks().charge(body, ctx.executor(), exchange.caller));
        } else if (exchange.lingering && exchange.answered) {
            ctx.close();
        }
        maybeEnd(ctx, exchange);
    }

    /**
     * Answers 413 and closes the connection once the answer is written and, when {@code linger}, the body read
     * and thrown away, within bounds.
     */
    private void tooLarge(ChannelHandlerContext ctx, Exchange exchange, boolean linger) {
        exchange.keepAlive = false;
        exchange.lingering = linger;
        if (linger) {
            ctx.executor().schedule(() -> ctx.close(), CheckApi.LINGER_MAX_SECONDS, TimeUnit.SECONDS);
        }
        answer(ctx, exchange, ExchangeAnswers.problem(413, CheckApi.TOO_LARGE));
    }

    /** Writes {@code pending}'s answer on this connection's loop, whichever thread completes it. */
    private void answer(ChannelHandlerContext ctx, Exchange exchange, CompletableFuture<Answer> pending) {
        exchange.answering = true;
        pending.whenComplete((answer, failure) -> {
            if (ctx.executor().inEventLoop()) {
                write(ctx, exchange, answer, failure);
            } else {
                ctx.executor().execute(() -> write(ctx, exchange, answer, failure));
            }
        });
    }

    private void write(ChannelHandlerContext ctx, Exchange exchange, Answer answer, Throwable failure) {
        if (failure != null) {
            LOG.log(System.Logger.Level.WARNING, "the rate limiter failed; answering 500", failure);
            answer = Answer.of(RequestDecision.limiterFailed());
        }
        if (!ctx.channel().isActive()) {
            return; // the client went away; channelInactive ended the exchange
        }
        boolean close = !exchange.keepAlive || stopping.getAsBoolean();
        // As the client spoke; a request that could not be read says HTTP/1.0 in Netty's stand-in for it
        boolean http10 =
                exchange.request.protocolVersion() == HttpVersion.HTTP_1_0 && exchange.route != Route.BAD_REQUEST;
        FullHttpResponse response =
                ExchangeAnswers.response(answer, exchange.request.method() == HttpMethod.HEAD, http10, close);
        int status = answer.status();
        ctx.writeAndFlush(response).addListener((ChannelFutureListener) written -> {
            if (exchange.route.metered()) {
                endpoints
                        .metrics()
                        .answered(exchange.route.meterName(), status, System.nanoTime() - exchange.startNanos);
            }
            exchange.answered = true;
            if (written.isSuccess() && exchange.unreadable) {
                ExchangeAnswers.closeGently(ctx);
                return;
            }
            if (!written.isSuccess() || (close && !(exchange.lingering && !exchange.bodyDone))) {
                ctx.close();
                return;
            }
            if (!close) {
                maybeEnd(ctx, exchange);
            }
        });
    }

    /** Ends the exchange once its answer is written and its body read, and reads the next request. */
    private void maybeEnd(ChannelHandlerContext ctx, Exchange exchange) {
        if (!exchange.answered || !exchange.bodyDone || !exchange.keepAlive || exchange.ended) {
            return;
        }
        end(exchange);
        current = null;
        while (!waiting.isEmpty() && (current == null || !current.bodyDone)) {
            channelRead(ctx, waiting.poll());
        }
        if (current == null || !current.bodyDone) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    private void end(Exchange exchange) {
        if (!exchange.ended) {
            exchange.ended = true;
            inFlight.decrementAndGet();
        }
    }
}
