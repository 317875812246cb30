package io.tollgate.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The deadline of a request's head ({@code server.request-head-timeout}): from its first byte, a client has so long
 * to send the whole head, however slowly the bytes come, or it is answered 408 and its connection closed. Without
 * it a client that sends a byte now and then (slowloris) holds a connection for ever, since no idle timeout passes.
 * On the connection's pipeline before the HTTP codec; {@link Exchanges} says when a head was read and when the next
 * one may begin.
 *
 * <p>Not thread-safe: one per connection, called on its event loop only.
 */
final class HeadDeadline extends ChannelInboundHandlerAdapter {

    private static final String PROBLEM = "{\"type\":\"about:blank\",\"title\":\"Request Timeout\",\"status\":408,"
            + "\"detail\":\"The request's head did not come within server.request-head-timeout.\"}";

    private static final byte[] TIMED_OUT =
            ("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/problem+json\r\n"
                            + "Connection: close\r\nContent-Length: " + PROBLEM.length() + "\r\n\r\n" + PROBLEM)
                    .getBytes(StandardCharsets.US_ASCII);

    private final long timeoutNanos;
    private final Runnable timedOut;
    private boolean awaiting = true;
    private ScheduledFuture<?> timer;

    /**
     * @param timeout how long a head may take from its first byte
     * @param timedOut told of every connection closed for taking longer
     */
    HeadDeadline(Duration timeout, Runnable timedOut) {
        this.timeoutNanos = timeout.toNanos();
        this.timedOut = timedOut;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (awaiting && timer == null && message instanceof ByteBuf bytes && bytes.isReadable()) {
            timer = ctx.executor().schedule(() -> expire(ctx), timeoutNanos, TimeUnit.NANOSECONDS);
        }
        ctx.fireChannelRead(message);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancel();
        super.channelInactive(ctx);
    }

    /** The head of a request was read: no deadline until the next may begin. */
    void headRead() {
        awaiting = false;
        cancel();
    }

    /** The exchange is over: the next bytes begin the next head, and its deadline. */
    void awaitNextHead() {
        awaiting = true;
    }

    private void expire(ChannelHandlerContext ctx) {
        timer = null;
        if (!awaiting || !ctx.channel().isActive()) {
            return;
        }
        timedOut.run();
        ctx.writeAndFlush(Unpooled.wrappedBuffer(TIMED_OUT)).addListener(ChannelFutureListener.CLOSE);
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
