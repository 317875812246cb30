package io.tollgate.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.tollgate.http.RequestDecision;
import io.tollgate.server.CheckApi.Answer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One allowed request on its way to the upstream and its answer on the way back, on the client connection's
 * event loop, through a connection of that loop ({@link UpstreamConnections}). Both bodies stream: a chunk is
 * written on as it is read, and the side that reads stops reading while the side that writes cannot take more
 * (the socket's write buffer is full), so neither body is ever held whole.
 *
 * <p>Hop-by-hop header fields are not forwarded either way; {@code X-Forwarded-For}, {@code -Proto} and {@code
 * -Host} tell the upstream who asked, a trusted proxy's values kept and extended, anybody else's replaced.
 * {@code Expect: 100-continue} is answered here, the request being allowed. The upstream that cannot be reached
 * is answered 502, the one that has not answered whole within the upstream timeout 504 (or, if its answer had
 * begun, the client connection is cut off), each as a problem. Costs settle and permits are given back once the
 * answer has gone to the client, or the client has gone away.
 *
 * <p>Not thread-safe: every method runs on the client connection's event loop.
 */
final class ProxiedExchange {

    /** How the connection's exchange learns that the proxied one is over. */
    interface Ending {
        /** The upstream's answer has been written whole ({@code success}) or cut off; close the connection if asked. */
        void answered(int status, boolean close, boolean success);

        /** The upstream did not answer: answer the client {@code answer} instead. */
        void answerInstead(Answer answer);
    }

    private final ChannelHandlerContext client;
    private final HttpRequest request;
    private final NettyRequestView view;
    private final RequestDecision decision;
    private final UpstreamConnections upstreams;
    private final Supplier<Limits> limits;
    private final ServerMetrics metrics;
    private final Ending ending;
    private final boolean clientKeepAlive;

    private List<HttpContent> early = new ArrayList<>();
    private Channel upstream;
    /** Whether the connection came from the pool, kept alive since an earlier exchange. */
    private boolean reused;
    /** Whether the request was sent again on a new connection, after a kept-alive one closed under it. */
    private boolean retried;

    private ScheduledFuture<?> timer;
    private boolean requestSent;
    private boolean informational;
    private boolean answerBegun;
    private boolean finished;
    private boolean close;
    private boolean upstreamReusable;
    private int status;
    private HttpHeaders answerHeaders;

    ProxiedExchange(
            ChannelHandlerContext client,
            HttpRequest request,
            NettyRequestView view,
            RequestDecision decision,
            UpstreamConnections upstreams,
            Supplier<Limits> limits,
            ServerMetrics metrics,
            boolean clientKeepAlive,
            Ending ending) {
        this.client = client;
        this.request = request;
        this.view = view;
        this.decision = decision;
        this.upstreams = upstreams;
        this.limits = limits;
        this.metrics = metrics;
        this.clientKeepAlive = clientKeepAlive;
        this.ending = ending;
    }

    /** Sends the request, with the body's chunks read so far ({@code early}) and the rest as it comes. */
    void start(List<HttpContent> readSoFar) {
        early.addAll(readSoFar);
        timer = client.executor().schedule(this::timedOut, upstreams.timeout().toNanos(), TimeUnit.NANOSECONDS);
        connect();
    }

    private void connect() {
        ChannelFuture connecting = upstreams.acquire(client.channel().eventLoop());
        reused = connecting.isDone() && connecting.isSuccess();
        if (connecting.isDone()) {
            connected(connecting);
        } else {
            connecting.addListener((ChannelFutureListener) this::connected);
        }
    }

    private void connected(ChannelFuture connecting) {
        if (finished) {
            if (connecting.isSuccess()) {
                upstreams.release(connecting.channel()); // the client went away meanwhile; nothing was sent
            }
            return;
        }
        if (!connecting.isSuccess()) {
            unreachable(connecting.cause());
            return;
        }
        upstream = connecting.channel();
        UpstreamConnections.attach(upstream, this);
        if (HttpUtil.is100ContinueExpected(request)) {
            client.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        }
        upstream.write(ProxiedHeads.upstreamHead(
                request, view, upstreams, limits.get().config().clientIps().isTrustedProxy(view.remoteAddress())));
        List<HttpContent> read = early;
        early = null;
        for (HttpContent content : read) {
            send(content);
        }
        upstream.flush();
        if (upstream.isWritable()) {
            // The rest of the body, if any; else a pipelined request (which waits) or the client's going away
            client.channel().config().setAutoRead(true);
        }
    }

    /** Forwards a chunk of the client's body; takes ownership of it. */
    void fromClient(HttpContent content) {
        if (finished) {
            ReferenceCountUtil.release(content);
        } else if (early != null) {
            early.add(content); // still connecting
        } else {
            send(content);
            upstream.flush();
        }
    }

    private void send(HttpContent content) {
        if (content instanceof LastHttpContent) {
            requestSent = true;
        }
        if (upstream != null && upstream.isActive()) {
            upstream.write(content);
            if (!upstream.isWritable()) {
                client.channel().config().setAutoRead(false);
            }
        } else {
            ReferenceCountUtil.release(content);
        }
    }

    /** Reads the client's body again once the upstream's socket takes more. */
    void upstreamWritabilityChanged() {
        if (!finished && upstream != null && upstream.isWritable()) {
            client.channel().config().setAutoRead(true);
        }
    }

    /** Reads the upstream's answer only while the client's socket takes more. */
    void clientWritabilityChanged() {
        if (!finished && upstream != null) {
            upstream.config().setAutoRead(client.channel().isWritable());
        }
    }

    /** Forwards what the upstream sent: the answer's head, then its body's chunks. */
    void fromUpstream(Object message) {
        if (finished) {
            ReferenceCountUtil.release(message);
            return;
        }
        if (message instanceof HttpResponse response) {
            if (response.decoderResult().isFailure()) {
                ReferenceCountUtil.release(message);
                upstreamFailed("its answer could not be read ("
                        + response.decoderResult().cause().getMessage() + ")");
                return;
            }
            if (response.status().code() < 200) {
                informational = true; // 100 Continue: this proxy answered the client's expectation itself
            } else {
                answerHead(response);
            }
        }
        if (message instanceof HttpContent content) {
            if (informational) {
                informational = !(content instanceof LastHttpContent);
                content.release();
                return;
            }
            boolean last = content instanceof LastHttpContent;
            ChannelFuture written = client.writeAndFlush(content);
            if (!last && !client.channel().isWritable()) {
                upstream.config().setAutoRead(false);
            }
            if (last) {
                timer.cancel(false);
                finishUpstream();
                written.addListener((ChannelFutureListener) done -> answered(done.isSuccess()));
            }
        }
    }

    private void answerHead(HttpResponse response) {
        answerBegun = true;
        status = response.status().code();
        boolean head = request.method() == HttpMethod.HEAD;
        boolean http10 = request.protocolVersion() == HttpVersion.HTTP_1_0;
        HttpResponse answer = new DefaultHttpResponse(
                http10 ? HttpVersion.HTTP_1_0 : HttpVersion.HTTP_1_1, response.status(), Exchanges.RESPONSE_HEADERS);
        HttpHeaders headers = answer.headers();
        decision.headers().forEach(headers::set);
        ProxiedHeads.copyEndToEnd(response.headers(), headers);
        if (!headers.contains(HttpHeaderNames.DATE)) {
            headers.set(HttpHeaderNames.DATE, HttpDate.now());
        }
        boolean delimited = head || headers.contains(HttpHeaderNames.CONTENT_LENGTH) || status == 204 || status == 304;
        close = !clientKeepAlive;
        if (!delimited) {
            if (http10) {
                close = true; // the end of the body is the end of the connection
            } else {
                headers.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            }
        }
        HttpUtil.setKeepAlive(answer, !close);
        upstreamReusable = HttpUtil.isKeepAlive(response);
        answerHeaders = headers;
        client.write(answer);
    }

    /** Gives the upstream connection back to its loop's pool if both messages on it are whole, else closes it. */
    private void finishUpstream() {
        Channel done = upstream;
        upstream = null; // from now on another exchange of this loop may use it: nothing here touches it again
        if (upstreamReusable && requestSent && done.isActive()) {
            upstreams.release(done);
        } else {
            UpstreamConnections.attach(done, null);
            done.close();
        }
    }

    private void answered(boolean success) {
        if (finished) {
            return;
        }
        finished = true;
        metrics.upstream(Integer.toString(status));
        limits.get().requests().finish(decision, status, answerHeaders::get);
        ending.answered(status, close || !success, success);
    }

    private void timedOut() {
        if (finished) {
            return;
        }
        metrics.upstream("timeout");
        closeUpstream();
        if (answerBegun) {
            cutOff();
        } else {
            answerInstead(
                    504,
                    "The upstream did not answer within " + upstreams.timeout().toMillis() + " ms.");
        }
    }

    /** The upstream closed its connection: before an answer, that is a failure; during one, the answer is cut. */
    void upstreamClosed() {
        if (finished) {
            return;
        }
        if (reused && !retried && !answerBegun && !ProxiedHeads.announcesBody(request)) {
            // A kept-alive connection the upstream closed as the request went out (its own idle timeout): the
            // request had no body, so it is sent again, once, on a new connection
            retried = true;
            upstream = null;
            early = new ArrayList<>();
            if (requestSent) {
                early.add(LastHttpContent.EMPTY_LAST_CONTENT); // else the client's end comes, and goes on
            }
            requestSent = false;
            connect();
            return;
        }
        if (answerBegun) {
            cutOff();
        } else {
            upstreamFailed("it closed the connection without answering");
        }
    }

    private void upstreamFailed(String why) {
        metrics.upstream("unreachable");
        timer.cancel(false);
        closeUpstream();
        if (answerBegun) {
            cutOff();
        } else {
            answerInstead(502, "The upstream could not be reached: " + why);
        }
    }

    private void unreachable(Throwable cause) {
        upstreamFailed(UpstreamConnections.why(cause));
    }

    private void answerInstead(int problemStatus, String detail) {
        finished = true;
        timer.cancel(false);
        releaseEarly();
        Answer answer = Answer.of(RequestDecision.problem(problemStatus, detail));
        limits.get().requests().finish(decision, problemStatus, answer.headers()::get);
        ending.answerInstead(answer);
    }

    /** Part of the answer is on its way: all that can be done is to cut the client's connection. */
    private void cutOff() {
        finished = true;
        timer.cancel(false);
        limits.get().requests().finish(decision, status, answerHeaders::get);
        ending.answered(status, true, false);
    }

    /**
     * The rest of the client's request is not forwarded (a malformed chunk, a body past the limit): the upstream's
     * connection goes, with what it was sent of the request, and the client is answered {@code status} with {@code
     * detail}, or cut off if the upstream's answer has begun.
     */
    void refuseRest(int status, String detail) {
        if (finished) {
            return;
        }
        closeUpstream();
        if (answerBegun) {
            cutOff();
        } else {
            answerInstead(status, detail);
        }
    }

    /** The client went away: the upstream's connection goes too, and what the request holds is given back. */
    void clientClosed() {
        if (finished) {
            return;
        }
        finished = true;
        if (timer != null) {
            timer.cancel(false);
        }
        releaseEarly();
        closeUpstream();
        // Settled as the upstream began its answer; 499 (nginx's "client closed request") if it had not
        limits.get()
                .requests()
                .finish(
                        decision,
                        answerBegun ? status : 499,
                        name -> answerHeaders == null ? null : answerHeaders.get(name));
    }

    private void closeUpstream() {
        if (upstream != null) {
            UpstreamConnections.attach(upstream, null);
            upstream.close();
        }
    }

    private void releaseEarly() {
        if (early != null) {
            early.forEach(ReferenceCountUtil::release);
            early.clear();
        }
    }
}
