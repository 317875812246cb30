package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The server warms up before it says it is ready, unless {@code server.warm-up: false} says not to: its own
 * decisions are counted in a meter of their own and nowhere else, and a server without the warm-up ran none.
 */
class WarmUpTest {

    private static final String CONFIG = """
            server:
              management-port: 0
            policies:
              per-client:
                limits:
                  - capacity: 10
                    refill: 10/s
            """;

    @Test
    void aServerRunsItsPathsBeforeItSaysItIsReadyAndCountsThemApart() throws Exception {
        try (RunningServer server = RunningServer.startWarm(CONFIG)) {
            String metrics = server.management("GET", "/metrics").body();

            assertThat(server.management("GET", "/readyz").statusCode()).isEqualTo(200);
            assertThat(metrics).containsPattern("(?m)^tollgate_warm_up_decisions_total [1-9]");
            assertThat(metrics.lines().filter(line -> !line.startsWith("#")))
                    .noneMatch(line -> line.contains("warm-up"))
                    .noneMatch(line -> line.startsWith("tollgate_server_requests_seconds_count"));
        }
    }

    @Test
    void aServerWithoutItsWarmUpIsReadyAtOnceAndRanNothing() throws Exception {
        try (RunningServer server = RunningServer.startCold(CONFIG)) {
            String metrics = server.management("GET", "/metrics").body();

            assertThat(server.management("GET", "/readyz").statusCode()).isEqualTo(200);
            assertThat(metrics).doesNotContainPattern("(?m)^tollgate_warm_up_decisions_total [1-9]");
        }
    }
}
