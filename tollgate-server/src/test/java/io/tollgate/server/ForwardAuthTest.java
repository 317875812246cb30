package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.DocumentationExamples;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code /v1/forward-auth}: the original request described in header fields as nginx ({@code X-Original-*}) and Caddy
 * or Traefik ({@code X-Forwarded-*}) send them, decided by the rules as a proxied request is.
 */
class ForwardAuthTest {

    private static final String RULES = """
            policies:
              free:
                limits: [{capacity: 2, refill: 1/m}]
              gold:
                limits: [{capacity: 100, refill: 100/m}]
            rules:
              - path: /api/**
                methods: [POST]
                host: api.example.com
                key: header:X-Api-Key
                policy: free
                policy-from: {header: X-Plan}
                deny: [k-banned]
            """;

    private RunningServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private void start(String trusted) throws Exception {
        server = RunningServer.start(RULES + """
                client-ip:
                  trusted-proxies: [%s]
                server:
                  forward-auth: true
                """.formatted(trusted));
    }

    private HttpResponse<String> ask(String... headers) {
        return server.get("/v1/forward-auth", headers);
    }

    @Test
    void thePagesServerFileIsTheOneBothExamplesAsk() throws Exception {
        String example = Files.readString(DocumentationExamples.PROJECT.resolve("examples/nginx/tollgate.yaml"));

        assertThat(DocumentationExamples.blocks("docs/forward-auth.md", "yaml")
                        .get(0)
                        .strip())
                .isEqualTo(example.strip());
        assertThat(ServerConfig.parse(example, "tollgate.yaml").forwardAuth()).isTrue();
    }

    @Test
    void theStartedLineSaysWhereForwardAuthIsAnswered() {
        ServerConfig forwardAuth = ServerConfig.parse(RULES + "server: {forward-auth: true}\n", "t.yaml");
        ServerConfig proxying = ServerConfig.parse(
                RULES + "server: {forward-auth: true, upstream: 'http://127.0.0.1:9000'}\n", "t.yaml");
        ServerConfig decisions = ServerConfig.parse("server: {port: 0}\n", "t.yaml");

        assertThat(TollgateServer.serving(forwardAuth)).isEqualTo(", decision API, forward-auth on /v1/forward-auth");
        assertThat(TollgateServer.serving(proxying))
                .isEqualTo(", proxying to http://127.0.0.1:9000, forward-auth on /v1/forward-auth");
        assertThat(TollgateServer.serving(decisions)).isEqualTo(", decision API only");
    }

    @Test
    void everyFormOfAPathCountsUnderTheRuleOfItsNormalFormAndAnAmbiguousOneIsRefused() throws Exception {
        start("127.0.0.1");

        List<Integer> statuses = new ArrayList<>();
        for (String uri : List.of("//api/orders", "/API/Orders;v=1", "/x/../api/./orders")) {
            statuses.add(ask(
                            "X-Original-Method", "POST",
                            "X-Original-URI", uri,
                            "X-Forwarded-Host", "api.example.com",
                            "X-Api-Key", "k-forms")
                    .statusCode());
        }
        HttpResponse<String> backslash = ask(
                "X-Original-Method", "POST",
                "X-Original-URI", "/api\\orders",
                "X-Forwarded-Host", "api.example.com",
                "X-Api-Key", "k-other");
        HttpResponse<String> encodedSlash = ask(
                "X-Original-Method", "POST",
                "X-Original-URI", "/api%2Forders",
                "X-Forwarded-Host", "api.example.com",
                "X-Api-Key", "k-other");

        assertThat(statuses).as("one bucket of 2 for all three").containsExactly(200, 200, 429);
        assertThat(backslash.statusCode()).isEqualTo(400);
        assertThat(backslash.body()).contains("The original request cannot be read: ambiguous path: a backslash");
        assertThat(encodedSlash.statusCode()).isEqualTo(400);
        assertThat(encodedSlash.body()).contains("an encoded '/' (%2F)");
    }

    @Test
    void aRequestDescribedAsCaddyDescribesItIsDecidedByTheRulesThatMatchIt() throws Exception {
        start("127.0.0.1");
        String[] caddy = {
            "X-Forwarded-Method", "POST",
            "X-Forwarded-Uri", "/api/orders?page=2",
            "X-Forwarded-Host", "api.example.com",
            "X-Forwarded-For", "203.0.113.5",
            "X-Api-Key", "k-1"
        };

        HttpResponse<String> first = ask(caddy);
        HttpResponse<String> second = ask(caddy);
        HttpResponse<String> third = ask(caddy);
        HttpResponse<String> otherMethod = ask(
                "X-Forwarded-Method", "GET",
                "X-Forwarded-Uri", "/api/orders",
                "X-Forwarded-Host", "api.example.com",
                "X-Api-Key", "k-1");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEmpty();
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"free\";r=1;t=60");
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(third.headers().firstValue("RateLimit-Policy")).hasValue("\"free\";q=2;w=120");
        assertThat(third.body()).contains("\"status\":429", "\"policies\":[\"free\"]");
        assertThat(otherMethod.statusCode()).as("no rule matches a GET").isEqualTo(200);
        assertThat(otherMethod.headers().firstValue("RateLimit")).isEmpty();
    }

    @Test
    void nginxsHeaderFieldsSayTheSameAndPlansAndListsApply() throws Exception {
        start("127.0.0.1");

        HttpResponse<String> gold = ask(
                "X-Original-Method", "POST",
                "X-Original-URI", "/api/orders",
                "X-Forwarded-Host", "api.example.com",
                "X-Api-Key", "k-2",
                "X-Plan", "gold");
        HttpResponse<String> banned = ask(
                "X-Original-Method", "POST",
                "X-Original-URI", "/api/orders",
                "X-Forwarded-Host", "api.example.com",
                "X-Api-Key", "k-banned");

        assertThat(gold.statusCode()).isEqualTo(200);
        assertThat(gold.headers().firstValue("RateLimit")).hasValue("\"gold\";r=99;t=1");
        assertThat(banned.statusCode()).isEqualTo(403);
        assertThat(banned.body()).contains("Requests from this client are refused.");
    }

    @Test
    void aCostSettledByTheResponseStaysAsTakenForNoResponseComes() throws Exception {
        server = RunningServer.start("""
                policies:
                  logins:
                    limits: [{capacity: 2, refill: 1/h}]
                rules:
                  - path: /login
                    key: header:X-User
                    policy: logins
                    response-cost: {charge-statuses: [401]}
                client-ip:
                  trusted-proxies: [127.0.0.1]
                server:
                  forward-auth: true
                """);
        String[] login = {"X-Original-Method", "POST", "X-Original-URI", "/login", "X-User", "u"};

        int[] statuses = {
            ask(login).statusCode(), ask(login).statusCode(), ask(login).statusCode()
        };

        // settled with a 200 the cost would be refunded, and the rule would never refuse
        assertThat(statuses).containsExactly(200, 200, 429);
    }

    @Test
    void onlyATrustedProxyMayDescribeARequest() throws Exception {
        start("10.0.0.0/8");

        HttpResponse<String> untrusted = ask("X-Original-Method", "GET", "X-Original-URI", "/api/orders");

        assertThat(untrusted.statusCode()).isEqualTo(403);
        assertThat(untrusted.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(untrusted.body())
                .contains("believed only from a proxy of client-ip.trusted-proxies; 127.0.0.1 is not one");
    }

    @Test
    void aRequestThatDescribesNothingIsA400() throws Exception {
        start("127.0.0.1");

        HttpResponse<String> bare = ask();
        HttpResponse<String> badPath = ask("X-Original-Method", "GET", "X-Original-URI", "api/%zz");

        assertThat(bare.statusCode()).isEqualTo(400);
        assertThat(bare.body()).contains("X-Original-Method or X-Forwarded-Method");
        assertThat(badPath.statusCode()).isEqualTo(400);
        assertThat(badPath.body()).contains("The original request cannot be read");
    }

    @Test
    void withoutForwardAuthRulesStillNeedAnUpstreamAndThePathIsNotServed() throws Exception {
        assertThatThrownBy(() -> ServerConfig.parse(RULES, "t.yaml"))
                .hasMessageContaining("rules: limit proxied requests, so they need server.upstream");
        server = RunningServer.start("""
                policies:
                  free:
                    limits: [{capacity: 2, refill: 1/m}]
                """);

        assertThat(ask("X-Original-Method", "GET", "X-Original-URI", "/").statusCode())
                .isEqualTo(404);
    }
}
