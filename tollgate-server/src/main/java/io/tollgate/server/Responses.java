package io.tollgate.server;

import io.tollgate.http.RequestDecision;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/** Writes whole responses, small and known in advance, on Jetty's core API. */
final class Responses {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    static final String JSON = "application/json";

    /** The Content-Type of Prometheus's text format, which {@code /metrics} answers in. */
    static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private Responses() {}

    /**
     * Runs {@code then} once {@code pending} completes: at once on this thread if it already has (a decision
     * made in memory, or by the deny cache), else on Jetty's threads. A Redis decision completes on the one
     * thread that reads Redis's replies; rendering and writing every response there made it the server's
     * bottleneck (half the decision API's throughput), with Jetty's threads idle.
     */
    static <T> void whenDecided(
            Request request, CompletionStage<T> pending, BiConsumer<? super T, ? super Throwable> then) {
        pending.whenCompleteAsync(
                then, answerer(pending, request.getComponents().getExecutor()));
    }

    /**
     * Returns where to answer once {@code pending} completes, as {@link #whenDecided} does: this thread if it
     * already has, else {@code jetty}, Jetty's threads.
     */
    static Executor answerer(CompletionStage<?> pending, Executor jetty) {
        return pending.toCompletableFuture().isDone() ? Runnable::run : jetty;
    }

    /** Writes {@code status}, the headers and the body, completing {@code callback} when it is sent. */
    static void write(Response response, Callback callback, int status, Map<String, String> headers, byte[] body) {
        response.setStatus(status);
        headers.forEach((name, value) -> response.getHeaders().put(name, value));
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    /** Writes an answer: its status, headers and body. */
    static void write(Response response, Callback callback, CheckApi.Answer answer) {
        write(response, callback, answer.status(), answer.headers(), answer.body());
    }

    /** Writes what a request decision says: the refusal's status, headers and body. */
    static void write(Response response, Callback callback, RequestDecision decision) {
        write(response, callback, decision.status(), decision.headers(), decision.body());
    }

    /** Writes an RFC 9457 problem of {@code status} saying {@code detail}. */
    static void problem(Response response, Callback callback, int status, String detail) {
        write(response, callback, RequestDecision.problem(status, detail));
    }

    /** Logs the limiter's unexpected failure and answers 500, saying only that the server log says why. */
    static void limiterFailed(Response response, Callback callback, Throwable failure) {
        LOG.log(System.Logger.Level.WARNING, "the rate limiter failed; answering 500", failure);
        write(response, callback, RequestDecision.limiterFailed());
    }

    /** Writes 405 with {@code Allow} listing the methods, for the first of which the problem asks. */
    static void methodNotAllowed(Request request, Response response, Callback callback, String... allowed) {
        response.getHeaders().put(HttpHeader.ALLOW, String.join(", ", allowed));
        problem(
                response,
                callback,
                405,
                "Use " + allowed[0] + " for " + Request.getPathInContext(request) + ", not " + request.getMethod()
                        + ".");
    }

    /** Writes a JSON body with the given status and headers. */
    static void json(Response response, Callback callback, int status, Map<String, String> headers, String json) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, JSON);
        write(response, callback, status, headers, json.getBytes(StandardCharsets.UTF_8));
    }

    /** Writes plain text. */
    static void text(Response response, Callback callback, int status, String contentType, String text) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        write(response, callback, status, Map.of(), text.getBytes(StandardCharsets.UTF_8));
    }
}
