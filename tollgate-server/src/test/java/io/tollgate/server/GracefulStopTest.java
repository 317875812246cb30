package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisExtension;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A server that stops lets the decisions in flight finish: a check waits for a frozen
 * Redis (SIGSTOP) while the server is closed, and gets Redis's answer once it thaws, not a reset connection.
 */
@Timeout(60)
class GracefulStopTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @Test
    void closingLetsADecisionInFlightFinish() throws Exception {
        String config = """
                server: {shutdown-timeout: 10s}
                redis: {uri: %s, timeout: 5s}
                policies:
                  per-client:
                    limits:
                      - capacity: 10
                        refill: 1/h
                """.formatted(redis.server().uri());
        RunningServer server = RunningServer.start(config);
        HttpRequest check = server.request("/v1/check")
                .POST(HttpRequest.BodyPublishers.ofString("{\"policy\": \"per-client\", \"key\": \"alice\"}"))
                .build();
        CompletableFuture<Void> closing;
        CompletableFuture<HttpResponse<String>> inFlight;
        redis.server().pause();
        try {
            inFlight = server.client().sendAsync(check, HttpResponse.BodyHandlers.ofString());
            TimeUnit.MILLISECONDS.sleep(300); // the check waits for Redis
            closing = CompletableFuture.runAsync(server::close);
            TimeUnit.MILLISECONDS.sleep(300); // the server is stopping
        } finally {
            redis.server().resume();
        }

        HttpResponse<String> answered = inFlight.get(20, TimeUnit.SECONDS);
        closing.get(20, TimeUnit.SECONDS);

        assertThat(answered.statusCode()).isEqualTo(200);
        assertThat(answered.body()).contains("\"remaining\":9", "\"degraded\":false");
    }
}
