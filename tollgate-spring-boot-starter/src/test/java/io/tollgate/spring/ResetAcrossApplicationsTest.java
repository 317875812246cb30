package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.testapp.TestApplication;
import io.tollgate.testing.RedisExtension;
import io.tollgate.top.KeyDisplay;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of one application on the application's Redis: a bucket reset through one's Actuator endpoint
 * ({@code DELETE /actuator/tollgate/{policy}/{key}}) ends the refusal the other had cached before it answers; and each
 * one's {@code /actuator/tollgate/top} merges both instances' counts, so a client refused on both is counted whole.
 */
class ResetAcrossApplicationsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final HttpClient client = HttpClient.newHttpClient();
    private final List<ConfigurableApplicationContext> applications = new ArrayList<>();

    @AfterEach
    void stopApplications() {
        applications.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void aResetThroughOneInstancesActuatorAnswersOnceTheOtherForgotTheRefusalItCached() throws Exception {
        redis.server().command("FLUSHALL");
        int one = start();
        int other = start();
        for (int i = 0; i < 3; i++) {
            assertThat(send(one, "GET", "/api/hello").statusCode()).isEqualTo(200);
        }
        assertThat(send(one, "GET", "/api/hello").statusCode()).isEqualTo(429);
        assertThat(send(other, "GET", "/api/hello").statusCode()).isEqualTo(429);
        assertThat(send(other, "GET", "/api/hello").statusCode())
                .as("refused from its deny cache")
                .isEqualTo(429);

        HttpResponse<String> reset = send(one, "DELETE", "/actuator/tollgate/per-ip/ip:127.0.0.1");

        assertThat(reset.statusCode()).isEqualTo(200);
        assertThat(reset.body()).contains("\"unconfirmed_instances\":[]");
        assertThat(send(other, "GET", "/api/hello").statusCode())
                .as("the other instance's very next request after the reset answered")
                .isEqualTo(200);
    }

    @Test
    void eachInstancesTopListsTheRefusalsOfBoth() throws Exception {
        redis.server().command("FLUSHALL");
        int one = start();
        int other = start();
        for (int i = 0; i < 5; i++) {
            send(one, "GET", "/api/hello"); // 3 admitted, 2 refused
        }
        for (int i = 0; i < 4; i++) {
            send(other, "GET", "/api/hello"); // 4 refused
        }
        String digest = KeyDisplay.digest("ip:127.0.0.1");

        String top = "";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        // the other instance publishes its counts every few seconds
        while (!top.contains("\"total\":6,") && System.nanoTime() < deadline) {
            Thread.sleep(200);
            top = send(one, "GET", "/actuator/tollgate/top?policy=per-ip").body();
        }

        assertThat(top)
                .contains("\"total\":6,")
                .contains("\"instances\":2,")
                .contains("\"digest\":\"" + digest + "\",\"count\":6,");
    }

    private int start() {
        // Arguments, not default properties: the profile's file sets what the endpoints expose
        ConfigurableApplicationContext application = new SpringApplicationBuilder(TestApplication.class)
                .profiles("ratelimited")
                .run(
                        "--server.port=0",
                        "--spring.data.redis.host=127.0.0.1",
                        "--spring.data.redis.port=" + redis.server().port(),
                        "--tollgate.top-keys.enabled=true",
                        "--management.endpoints.web.exposure.include=health,tollgate");
        applications.add(application);
        return Integer.parseInt(application.getEnvironment().getProperty("local.server.port"));
    }

    private HttpResponse<String> send(int port, String method, String path) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
