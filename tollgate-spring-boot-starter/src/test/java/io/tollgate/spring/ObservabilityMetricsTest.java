package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ObservabilityExamples;
import io.tollgate.spring.testapp.TestApplication;
import io.tollgate.testing.RedisExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Keeps examples/observability/ true for applications with the starter: every metric its dashboard and alert
 * rules name, but for those only the server publishes, is in a real scrape of {@code /actuator/prometheus}
 * of an application on Redis that has limited requests and then lost its Redis.
 */
class ObservabilityMetricsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final HttpClient client = HttpClient.newHttpClient();

    @Test
    void everyMetricTheDashboardAndTheRulesNameButTheServersIsInTheApplicationsScrape() throws Exception {
        redis.server().command("FLUSHALL");
        try (ConfigurableApplicationContext application = new SpringApplicationBuilder(TestApplication.class)
                .profiles("ratelimited")
                .run(
                        "--server.port=0",
                        "--spring.data.redis.host=127.0.0.1",
                        "--spring.data.redis.port=" + redis.server().port(),
                        "--tollgate.redis.timeout=50ms",
                        "--tollgate.client-ip.trusted-proxies=127.0.0.1/32",
                        "--management.endpoints.web.exposure.include=health,prometheus")) {
            int port = Integer.parseInt(application.getEnvironment().getProperty("local.server.port"));
            for (int i = 0; i < 5; i++) {
                get(port, "/api/hello", "10.0.0.1");
            }
            redis.server().kill();
            for (int i = 0; i < 4; i++) {
                get(port, "/api/hello", "10.0.1." + i);
            }

            String scrape = get(port, "/actuator/prometheus", "10.0.0.1").body();

            Set<String> expected = new TreeSet<>(ObservabilityExamples.metricNames());
            expected.removeAll(ObservabilityExamples.serverOnly());
            assertThat(expected).contains("tollgate_decisions_total", "tollgate_redis_failures_total");
            assertThat(ObservabilityExamples.missingFrom(expected, scrape))
                    .as("metrics the dashboard or the rules name that the application's scrape lacks")
                    .isEmpty();
        } finally {
            redis.server().heal();
        }
    }

    private HttpResponse<String> get(int port, String path, String forwardedFor) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .header("X-Forwarded-For", forwardedFor)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
