package io.tollgate.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.InMemoryRateLimiter;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The filter as {@code web.xml} declares it: by class name, configured by init parameters. */
class DeclaredFilterTest {

    @Test
    void readsItsRulesFromTheClassPathAndUsesTheApplicationsLimiter() throws Exception {
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();
        try (JettyApp app = JettyApp.startDeclared(
                Map.of("config", "classpath:tollgate.yaml", "limiter", "attribute:app.limiter"),
                context -> context.setAttribute("app.limiter", limiter))) {

            int missingKey = app.get("/api/x").statusCode();
            int first = app.get("/api/x", "X-API-Key", "k").statusCode();
            int second = app.get("/api/x", "X-API-Key", "k").statusCode();
            int third = app.get("/api/x", "X-API-Key", "k").statusCode();

            assertThat(missingKey).isEqualTo(401);
            assertThat(first).isEqualTo(200);
            assertThat(second).isEqualTo(200);
            assertThat(third).isEqualTo(429);
            assertThat(limiter.estimatedKeyCount()).isEqualTo(1);
        }
    }

    @Test
    void readsItsRulesFromAFileAndKeepsItsOwnInMemoryLimiterByDefault() throws Exception {
        String file = DeclaredFilterTest.class.getResource("/tollgate.yaml").getPath();
        try (JettyApp app = JettyApp.startDeclared(Map.of("config", file), context -> {})) {

            app.get("/api/x", "X-API-Key", "k");
            app.get("/api/x", "X-API-Key", "k");

            assertThat(app.get("/api/x", "X-API-Key", "k").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aBadInitParameterStopsTheApplicationFromStartingWithAMessageNamingIt() {
        assertThatThrownBy(() -> JettyApp.startDeclared(Map.of(), context -> {}))
                .hasStackTraceContaining("init parameter 'config' is required");
        assertThatThrownBy(() -> JettyApp.startDeclared(Map.of("config", "classpath:nope.yaml"), context -> {}))
                .hasStackTraceContaining("init parameter 'config': no class path resource 'nope.yaml'");
        assertThatThrownBy(() -> JettyApp.startDeclared(
                        Map.of("config", "classpath:tollgate.yaml", "limiter", "attribute:absent"), context -> {}))
                .hasStackTraceContaining("init parameter 'limiter': servlet context attribute 'absent' is not set");
        assertThatThrownBy(() -> JettyApp.startDeclared(
                        Map.of("config", "classpath:tollgate.yaml", "limiter", "redis"), context -> {}))
                .hasStackTraceContaining("init parameter 'limiter' must be memory or attribute:NAME, was 'redis'");
        assertThatThrownBy(() -> JettyApp.startDeclared(
                        Map.of("config", "classpath:tollgate.yaml", "async", "yes"), context -> {}))
                .hasStackTraceContaining("init parameter 'async' must be true or false, was 'yes'");
    }

    @Test
    void anInvalidRulesFileIsReportedWithItsLine() {
        assertThatThrownBy(
                        () -> JettyApp.startDeclared(Map.of("config", "classpath:invalid-rules.yaml"), context -> {}))
                .hasStackTraceContaining(
                        "init parameter 'config': invalid-rules.yaml:6: rules[0].policy: unknown policy 'per-ky'");
    }
}
