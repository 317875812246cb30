package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example application with its application.yml as it is, nothing overridden but the Redis port: the
 * header values that docs/spring-boot.md quotes are what this application answers.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OrdersApplicationAsWrittenTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry properties) {
        properties.add("spring.data.redis.port", () -> redis.server().port());
    }

    @Test
    void theFirstRequestCarriesTheFieldsThePageQuotes() throws Exception {
        HttpResponse<String> first = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/users/u-1/orders"))
                                .header("X-API-Key", "written-key")
                                .build(),
                        HttpResponse.BodyHandlers.ofString());

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().allValues("RateLimit"))
                .containsExactly("\"per-key\";r=19;t=1", "\"per-user\";r=4;t=12");
        assertThat(Files.readString(Path.of("..", "..", "docs", "spring-boot.md")))
                .contains("`\"per-key\";r=19;t=1` and `\"per-user\";r=4;t=12`");
    }
}
