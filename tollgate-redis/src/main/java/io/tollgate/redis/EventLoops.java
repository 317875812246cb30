package io.tollgate.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.EventLoopGroupProvider;
import io.lettuce.core.resource.Transports;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Tells which of Lettuce's I/O event loops the calling thread runs, if any, through Lettuce's and Netty's
 * public API. Each thread is looked up once: the loops of a client never change threads.
 *
 * <p>Thread-safe.
 */
final class EventLoops {

    /** Cached for threads that run no loop of this client (another Netty server's, say). */
    private static final Executor NOT_OURS = command -> {
        throw new IllegalStateException("not an event loop");
    };

    private final Supplier<ClientResources> resources;
    private final ThreadLocal<Executor> loopOfThread = new ThreadLocal<>();

    /** @param resources the resources of the open connection, or null while there is none */
    EventLoops(Supplier<ClientResources> resources) {
        this.resources = resources;
    }

    /** Returns the event loop the calling thread runs, or null if it runs none of the client's loops. */
    Executor current() {
        if (!(Thread.currentThread() instanceof FastThreadLocalThread)) {
            return null; // every Netty loop runs on one of these: other threads need no lookup
        }
        Executor known = loopOfThread.get();
        if (known == null) {
            ClientResources open = resources.get();
            if (open == null) {
                return null; // no connection yet, so no loop of ours; ask again once there is one
            }
            known = find(open);
            loopOfThread.set(known);
        }
        return known == NOT_OURS ? null : known;
    }

    /**
     * Returns what runs a task on {@code loop} once the loop has read its sockets: a task given to a Netty event
     * loop while it runs its tasks runs in that same round, before the loop reads its sockets again (a reply may
     * wait there unread), while one that the loop schedules itself runs in its next round, after it read them.
     */
    static Executor afterReading(Executor loop) {
        if (!(loop instanceof ScheduledExecutorService scheduler)) {
            return loop;
        }
        return task -> scheduler.execute(() -> scheduler.schedule(task, 0, TimeUnit.NANOSECONDS));
    }

    private static Executor find(ClientResources open) {
        EventLoopGroupProvider provider = open.eventLoopGroupProvider();
        // allocate hands out the client's shared group and counts a reference, which release gives back
        EventLoopGroup group = provider.allocate(Transports.eventLoopGroupClass());
        try {
            for (EventExecutor loop : group) {
                if (loop.inEventLoop()) {
                    return loop;
                }
            }
            return NOT_OURS;
        } finally {
            provider.release(group, 0, 0, TimeUnit.MILLISECONDS);
        }
    }
}
