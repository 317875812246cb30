package io.tollgate.server;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import io.tollgate.server.CheckApi.Answer;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The forward-auth endpoint, {@value #PATH}: a proxy in front of a service (nginx {@code auth_request}, Caddy
 * {@code forward_auth}, Traefik {@code forwardAuth}) asks it about each request it is about to pass on, describing
 * that request in header fields: its method in {@code X-Original-Method} (nginx) or {@code X-Forwarded-Method}
 * (Caddy, Traefik), its path and query in {@code X-Original-URI} or {@code X-Forwarded-Uri}, its host in {@code
 * X-Forwarded-Host} (else the asking request's {@code Host}), its client in {@code X-Forwarded-For} as {@code
 * client-ip} reads it; its other header fields are the asking request's own, which those proxies copy. The rules
 * decide it as they decide a proxied request, and the answer is {@code 200} with the rate-limit fields to copy onto
 * the response, or the refusal (status, {@code Retry-After}, {@code RateLimit-Policy}, {@code RateLimit}, the
 * problem body).
 *
 * <p>Those header fields are believed only from a proxy of {@code client-ip.trusted-proxies}: from anybody else the
 * request is refused with 403, since a client could otherwise describe any request it likes. No response reaches
 * this endpoint, so what a rule would settle once the response is known is settled at once: the slots of a
 * concurrency limit are given back, and a response cost stays as taken. Stateless.
 */
final class ForwardAuth {

    /** The path of the endpoint on the public port. */
    static final String PATH = "/v1/forward-auth";

    private static final System.Logger LOG = System.getLogger(ForwardAuth.class.getName());

    private ForwardAuth() {}

    /** Answers the forward-auth request {@code request} from {@code peer}, with the rules of {@code limits}. */
    static CompletionStage<Answer> answer(HttpRequest request, SocketAddress peer, Limits limits) {
        RequestLimiter rules = limits.forwardAuth();
        String address = peer instanceof InetSocketAddress inet && inet.getAddress() != null
                ? inet.getAddress().getHostAddress()
                : String.valueOf(peer);
        if (!limits.config().clientIps().isTrustedProxy(address)) {
            return done(Answer.problem(
                    403,
                    "Forward-auth requests describe another request, and are believed only from a proxy of"
                            + " client-ip.trusted-proxies; " + address + " is not one."));
        }
        String method = first(request, "X-Original-Method", "X-Forwarded-Method");
        String uri = first(request, "X-Original-URI", "X-Forwarded-Uri");
        if (method == null || uri == null) {
            return done(Answer.problem(
                    400,
                    "A forward-auth request names the original request's method in X-Original-Method or"
                            + " X-Forwarded-Method, and its path in X-Original-URI or X-Forwarded-Uri."));
        }
        NettyRequestView view;
        try {
            DefaultHttpRequest original =
                    new DefaultHttpRequest(request.protocolVersion(), HttpMethod.valueOf(method), uri);
            original.headers().set(request.headers());
            String host = request.headers().get("X-Forwarded-Host");
            if (host != null) {
                original.headers().set(HttpHeaderNames.HOST, host);
            }
            view = NettyRequestView.of(original, peer, rules.paths());
        } catch (IllegalArgumentException e) {
            return done(Answer.problem(400, "The original request cannot be read: " + e.getMessage()));
        }
        CompletionStage<RequestDecision> decided;
        try {
            decided = rules.decide(view);
        } catch (RuntimeException e) {
            decided = CompletableFuture.failedFuture(e);
        }
        return decided.handle((decision, failure) -> {
            if (failure != null) {
                LOG.log(System.Logger.Level.ERROR, "the rate limiter failed on a forward-auth request", failure);
                return Answer.of(RequestDecision.limiterFailed());
            }
            // No response will come: the slots are given back now, and the cost is not settled (it stays as taken)
            rules.release(decision);
            return decision.allowed() ? new Answer(200, decision.headers(), new byte[0]) : Answer.of(decision);
        });
    }

    private static String first(HttpRequest request, String name, String otherName) {
        String value = request.headers().get(name);
        return value != null && !value.isBlank()
                ? value.strip()
                : request.headers().get(otherName);
    }

    private static CompletionStage<Answer> done(Answer answer) {
        return CompletableFuture.completedFuture(answer);
    }
}
