package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.testapp.TestApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/** A Boot application whose rule charges each caller its plan's policy, and lists some callers. */
@SpringBootTest(
        classes = TestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "tollgate.redis.use-application-redis=false",
            "tollgate.policies.free.limits[0].capacity=2",
            "tollgate.policies.free.limits[0].refill=1/h",
            "tollgate.policies.gold.limits[0].capacity=1000",
            "tollgate.policies.gold.limits[0].refill=1000/h",
            "tollgate.rules[0].path=/plans/**",
            "tollgate.rules[0].key=header:X-API-Key",
            "tollgate.rules[0].policy=free",
            "tollgate.rules[0].policy-from.header=X-Plan",
            "tollgate.rules[0].overrides.k-ops=gold",
            "tollgate.rules[0].allow=k-monitor",
            "tollgate.rules[0].deny=k-abuser"
        })
@ActiveProfiles("ratelimited") // for the policies the application's @RateLimit annotations name
@DirtiesContext
class TiersApplicationTest {

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Test
    void aRuleChargesEachCallerThePolicyOfItsPlan() throws Exception {
        List<Integer> free = new ArrayList<>();
        List<Integer> gold = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            free.add(get("/plans/report", "X-API-Key", "k-1").statusCode());
            gold.add(get("/plans/report", "X-API-Key", "k-2", "X-Plan", "gold").statusCode());
        }
        HttpResponse<String> ops = get("/plans/report", "X-API-Key", "k-ops", "X-Plan", "free");

        assertThat(free).containsExactly(200, 200, 429);
        assertThat(gold).containsExactly(200, 200, 200);
        assertThat(ops.headers().firstValue("RateLimit-Policy")).hasValue("\"gold\";q=1000;w=3600");
    }

    @Test
    void aRuleNeverLimitsItsAllowedCallersAndRefusesItsDeniedOnes() throws Exception {
        List<Integer> monitor = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            monitor.add(get("/plans/report", "X-API-Key", "k-monitor").statusCode());
        }
        HttpResponse<String> abuser = get("/plans/report", "X-API-Key", "k-abuser");

        assertThat(monitor).containsOnly(200);
        assertThat(abuser.statusCode()).isEqualTo(403);
        assertThat(abuser.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(abuser.body()).contains("Requests from this client are refused.");
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
