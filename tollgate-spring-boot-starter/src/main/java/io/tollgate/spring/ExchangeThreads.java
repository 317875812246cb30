package io.tollgate.spring;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Where an exchange continues after a decision that Redis made: on the event loop of its own connection when
 * the server is Reactor Netty (where it would have run anyway), otherwise on Reactor's parallel scheduler;
 * never on the Redis client's event loop, which would then run the application's work and stall every other
 * decision behind it.
 */
final class ExchangeThreads {

    private static final boolean REACTOR_NETTY =
            ClassUtils.isPresent("reactor.netty.Connection", ExchangeThreads.class.getClassLoader());

    /** One scheduler per event loop; there are as many as the server has loops. */
    private static final Map<Executor, Scheduler> LOOPS = new ConcurrentHashMap<>();

    private ExchangeThreads() {}

    /** Returns the scheduler for the exchange, or Reactor's parallel one when there is no exchange. */
    static Scheduler of(ServerWebExchange exchange) {
        if (exchange != null && REACTOR_NETTY) {
            Executor loop = NettyLoop.of(exchange.getRequest());
            if (loop != null) {
                return LOOPS.computeIfAbsent(loop, Schedulers::fromExecutor);
            }
        }
        return Schedulers.parallel();
    }

    /** Reads Reactor Netty's connection; a class of its own so that it loads only where Reactor Netty is. */
    private static final class NettyLoop {
        static Executor of(ServerHttpRequest request) {
            Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request);
            return nativeRequest instanceof reactor.netty.Connection connection
                    ? connection.channel().eventLoop()
                    : null;
        }
    }
}
