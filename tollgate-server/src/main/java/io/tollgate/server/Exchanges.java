package io.tollgate.server;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.tollgate.http.NormalPath;
import io.tollgate.http.RequestDecision;
import io.tollgate.server.CheckApi.Answer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The exchanges of one connection of the {@link DataPlane}, one at a time, on the connection's event loop: the first
 * of the handlers after the HTTP codec. It reads a request into an {@link Exchange} and passes it on to the handlers
 * of each concern ({@link Authentication}, {@link Expectations}, {@link RequestBodies}, {@link Routing}); whichever
 * answers writes a {@link Reply}, which this handler sends, and it reads the next request once the answer is written
 * and the request's body read. A request that cannot be read is answered here. Requests a client pipelines meanwhile
 * wait, unread, in order; the socket is not read while they do, so a client that never reads its answers fills its
 * own buffers, not this process's memory. Body chunks go where the exchange reads them: the proxy's to the
 * upstream, the decision API's to {@link RequestBodies}; others are counted and thrown away.
 *
 * <p>Not thread-safe: one per connection, called on its event loop only.
 */
final class Exchanges extends ChannelDuplexHandler {

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
    private Exchange current;
    /** This connection's deadline for request heads, or null where its pipeline has none; looked up once. */
    private HeadDeadline deadline;

    Exchanges(Endpoints endpoints, AtomicInteger inFlight, BooleanSupplier stopping) {
        this.endpoints = endpoints;
        this.inFlight = inFlight;
        this.stopping = stopping;
    }

    /** Returns the handlers of a connection's exchanges, this one first, in the pipeline's order. */
    static ChannelHandler[] pipeline(Endpoints endpoints, AtomicInteger inFlight, BooleanSupplier stopping) {
        return new ChannelHandler[] {
            new Exchanges(endpoints, inFlight, stopping),
            new BrowserRequests(endpoints),
            new Authentication(endpoints),
            new Expectations(),
            new RequestBodies(),
            new Routing(endpoints, stopping)
        };
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (current != null && current.unreadable) {
            // After a request that cannot be read, nothing the connection sends is: its end is unknown
            ReferenceCountUtil.release(message);
            return;
        }
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
    public void write(ChannelHandlerContext ctx, Object message, ChannelPromise promise) throws Exception {
        if (message instanceof Reply reply) {
            answer(ctx, reply.exchange(), reply.answer());
            promise.trySuccess();
            return;
        }
        super.write(ctx, message, promise);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof Reply.MayEnd mayEnd) {
            maybeEnd(ctx, mayEnd.exchange());
            return;
        }
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

    /** Reads a request's head into an exchange and passes it on; answers one that cannot be read. */
    private void begin(ChannelHandlerContext ctx, HttpRequest request) {
        if (deadline == null) {
            deadline = ctx.pipeline().get(HeadDeadline.class);
        }
        if (deadline != null) {
            deadline.headRead();
        }
        DecoderResult decoded = request.decoderResult();
        if (decoded.isFailure()) {
            current = started(new Exchange(request, Route.BAD_REQUEST, "", false));
            current.bodyDone = true; // the decoder reads nothing more from this connection
            current.unreadable = true;
            answer(ctx, current, CompletableFuture.completedFuture(ExchangeAnswers.badMessage(decoded.cause())));
            return;
        }
        String unframed = RequestFraming.problem(request);
        if (unframed != null) {
            current = started(new Exchange(request, Route.BAD_REQUEST, "", false));
            current.bodyDone = true;
            current.unreadable = true;
            int status = unframed.startsWith(RequestFraming.TOO_MANY_FIELDS) ? 431 : 400;
            answer(ctx, current, ExchangeAnswers.problem(status, (status == 400 ? "Bad Request: " : "") + unframed));
            return;
        }
        NormalPath normal;
        String path;
        try {
            normal = endpoints.normalPath(request.uri());
            path = normal != null ? normal.decoded() : ExchangeAnswers.rawPath(request.uri());
        } catch (IllegalArgumentException malformed) {
            current = started(new Exchange(request, Route.BAD_REQUEST, "", false));
            answer(ctx, current, ExchangeAnswers.problem(400, "Bad Request: " + malformed.getMessage()));
            return;
        }
        current = started(new Exchange(request, endpoints.route(path), path, HttpUtil.isKeepAlive(request)));
        current.normalPath = normal;
        ctx.fireChannelRead(current);
    }

    private Exchange started(Exchange exchange) {
        inFlight.incrementAndGet();
        return exchange;
    }

    /** Takes a chunk of the current exchange's body where the exchange reads it, and ends the exchange after it. */
    private void content(ChannelHandlerContext ctx, HttpContent content) {
        Exchange exchange = current;
        boolean last = content instanceof LastHttpContent;
        if (exchange.early != null || exchange.proxy != null) {
            exchange.forwarded += content.content().readableBytes();
            boolean tooLarge = exchange.forwarded > endpoints.upstreams().maxBodyBytes();
            if (content.decoderResult().isFailure() || tooLarge) {
                // Not forwarded on: the upstream's copy is cut off, and the connection's next bytes are not read
                exchange.bodyDone = true;
                exchange.unreadable = true;
                if (exchange.proxy == null) {
                    ctx.close(); // still being decided: nothing was sent, and nothing will be
                } else if (tooLarge) {
                    exchange.proxy.refuseRest(413, endpoints.upstreams().tooLarge());
                } else {
                    Throwable cause = content.decoderResult().cause();
                    exchange.proxy.refuseRest(
                            400,
                            "Bad Request: the body cannot be read"
                                    + (cause == null || cause.getMessage() == null ? "." : ": " + cause.getMessage()));
                }
                return;
            }
            if (exchange.early != null) {
                exchange.early.add(content.retain());
            } else {
                exchange.proxy.fromClient(content.retain());
            }
            if (last) {
                exchange.bodyDone = true;
                maybeEnd(ctx, exchange);
            }
            return;
        }
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
        } else if (exchange.body != null) {
            // Its end is the body's end: an answer written at once then finds the exchange's body read
            exchange.bodyDone = last;
            ctx.fireChannelRead(new RequestBodies.Body(exchange, content.retain()));
        } else {
            exchange.discarded += content.content().readableBytes();
        }
        if (exchange.lingering && exchange.discarded >= CheckApi.LINGER_MAX_BYTES) {
            ctx.close();
            return;
        }
        if (!last) {
            return;
        }
        exchange.bodyDone = true;
        if (exchange.lingering && exchange.answered) {
            ctx.close();
        }
        maybeEnd(ctx, exchange);
    }

    /** Writes {@code pending}'s answer on this connection's loop, whichever thread completes it. */
    private void answer(ChannelHandlerContext ctx, Exchange exchange, CompletableFuture<Answer> pending) {
        exchange.answering = true;
        pending.whenComplete((answer, failure) -> {
            if (ctx.executor().inEventLoop()) {
                send(ctx, exchange, answer, failure);
            } else {
                ctx.executor().execute(() -> send(ctx, exchange, answer, failure));
            }
        });
    }

    private void send(ChannelHandlerContext ctx, Exchange exchange, Answer answer, Throwable failure) {
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
        if (deadline != null) {
            deadline.awaitNextHead();
        }
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
