package io.tollgate.server;

import io.tollgate.http.RequestDecision;
import io.tollgate.server.CheckApi.Answer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The answers of {@code /healthz} and {@code /readyz}, whatever serves them: {@code /healthz} says the process
 * is up; {@code /readyz} answers 503 until the server is warm, then follows the store. Thread-safe.
 */
final class Readiness {

    private static final Map<String, String> NO_STORE = Map.of("Cache-Control", "no-store");

    private final StoreMonitor store;
    private volatile boolean ready;

    Readiness(StoreMonitor store) {
        this.store = store;
    }

    /** Says that the server is warm: {@code /readyz} follows the store from now on. */
    void ready() {
        ready = true;
    }

    /** Answers {@code GET /healthz} or, for any other path, {@code GET /readyz}; the stage never fails. */
    CompletableFuture<Answer> answer(String path) {
        if (path.equals("/healthz")) {
            return CompletableFuture.completedFuture(Answer.json(200, NO_STORE, "{\"status\":\"up\"}"));
        }
        if (!ready) {
            return CompletableFuture.completedFuture(
                    Answer.of(RequestDecision.problem(503, "The server is warming up.")));
        }
        return store.check().toCompletableFuture().handle((unavailable, failure) -> {
            if (failure == null && unavailable.isEmpty()) {
                return Answer.json(200, NO_STORE, "{\"status\":\"ready\"}");
            }
            String why = failure == null ? unavailable.get() : String.valueOf(failure.getMessage());
            return Answer.of(RequestDecision.problem(503, "The store is unavailable: " + why));
        });
    }
}
