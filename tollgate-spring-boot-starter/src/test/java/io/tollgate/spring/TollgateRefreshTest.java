package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.tollgate.spring.testapp.TestApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * A changed tollgate.* applied on Spring Cloud's refresh event: new limits at once, spent tokens kept, and a
 * bad change (an invalid value, or a policy an annotation still names) changing nothing.
 */
@SpringBootTest(
        classes = TestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "tollgate.redis.use-application-redis=false")
@ActiveProfiles("ratelimited")
@DirtiesContext
class TollgateRefreshTest {

    private final HttpClient client = HttpClient.newHttpClient();
    private final Map<String, Object> changed = new LinkedHashMap<>();

    @Autowired
    ConfigurableApplicationContext context;

    @LocalServerPort
    int port;

    @Test
    void aChangedEnvironmentAppliesNewLimitsAndKeepsWhatClientsSpentUnlessItIsBad() throws Exception {
        List<Integer> before = statuses(2);

        // A list element is replaced whole by the source that has it: give every field of the limit.
        change(Map.of(
                "tollgate.policies.per-ip.limits[0].capacity", 10, "tollgate.policies.per-ip.limits[0].refill", "1/h"));
        List<Integer> after = statuses(9);
        HttpResponse<String> headers = get("/api/hello");
        change(Map.of("tollgate.policies.per-ip.limits[0].capacity", 0));
        HttpResponse<String> afterInvalid = get("/api/hello");
        RateLimitInterceptor annotations = context.getBean(RateLimitInterceptor.class);
        LiveRules.Rules running = context.getBean(LiveRules.class).current();
        Throwable withoutPolicies = catchThrowable(() -> annotations.replace(
                running.requests(), Map.of(), running.config().clientIps()));
        HttpResponse<String> afterMissingPolicy = get("/users/alice/orders");

        assertThat(before).containsExactly(200, 200);
        assertThat(after)
                .as("2 of 3 spent: 8 of a new 10 left")
                .containsExactly(200, 200, 200, 200, 200, 200, 200, 200, 429);
        assertThat(headers.headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=10;w=36000");
        assertThat(afterInvalid.headers().firstValue("RateLimit-Policy"))
                .as("capacity 0 is refused: the running limits stay")
                .hasValue("\"per-ip\";q=10;w=36000");
        assertThat(withoutPolicies)
                .as("a policy that @RateLimit names cannot go away")
                .isInstanceOf(InvalidTollgatePropertiesException.class)
                .hasMessageContaining("unknown policy 'per-user'");
        assertThat(afterMissingPolicy.statusCode())
                .as("the running annotations stay")
                .isEqualTo(200);
    }

    /** Changes properties, as a refreshed configuration source would, and publishes Spring Cloud's event. */
    private void change(Map<String, Object> properties) {
        changed.putAll(properties);
        context.getEnvironment().getPropertySources().remove("refreshed");
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("refreshed", changed));
        context.publishEvent(new EnvironmentChangeEvent(context, Set.copyOf(properties.keySet())));
    }

    private List<Integer> statuses(int requests) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            statuses.add(get("/api/hello").statusCode());
        }
        return statuses;
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
