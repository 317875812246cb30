package io.tollgate.server;

import static io.tollgate.server.DecisionApiTest.assertProblem;
import static io.tollgate.server.EnvoyRateLimitServiceTest.descriptor;
import static io.tollgate.server.EnvoyRateLimitServiceTest.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.Code;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Named callers: the decision API and Envoy's rate limit service serve only the callers the file names, each by
 * its bearer token, each limited to its policies and its keys' prefix; a token comes from the file, the
 * environment or a file of its own, and a reload revokes it.
 */
class CallersTest {

    /** Set for the test JVM by the build (tollgate-server/pom.xml). */
    private static final String BILLING_TOKEN = "billing-token-from-the-environment";

    private static final String CHECKOUT_TOKEN = "checkout-token-3f9a";

    @TempDir
    Path dir;

    private Path file;
    private RunningServer server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        Files.writeString(dir.resolve("checkout-token"), CHECKOUT_TOKEN + "\n"); // as echo writes it
        Path limits = Files.createDirectories(dir.resolve("ratelimit"));
        Files.writeString(limits.resolve("edge.yaml"), """
                domain: edge
                descriptors:
                  - key: user
                    tollgate_policy: per-user
                """);
        Files.writeString(limits.resolve("other.yaml"), """
                domain: other
                descriptors:
                  - key: user
                    tollgate_policy: per-user
                """);
        file = Files.writeString(dir.resolve("tollgate.yaml"), config(true));
        server = RunningServer.start(ServerConfig.load(file).withPort(0));
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.server().envoyPort())
                .usePlaintext()
                .build();
    }

    private String config(boolean withCheckout) {
        return """
                server:
                  management-port: 0
                callers:
                %s  - name: billing
                    token: {env: TOLLGATE_TEST_BILLING_TOKEN}
                  - name: edge-envoy
                    token: edge-envoy-token
                    policies: [per-user]
                    key-prefix: "edge|"
                policies:
                  per-user:
                    limits:
                      - capacity: 3
                        refill: 1/h
                  per-tenant:
                    limits:
                      - capacity: 3
                        refill: 1/h
                envoy:
                  port: 0
                  host: 127.0.0.1
                  config: %s
                """.formatted(
                        withCheckout ? """
                                  - name: checkout
                                    token: {file: %s}
                                    policies: [per-user]
                                    key-prefix: "checkout:"
                                """.formatted(dir.resolve("checkout-token")) : "", dir.resolve("ratelimit"));
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        server.close();
    }

    private HttpResponse<String> check(String token, String policy, String key) {
        String body = "{\"policy\": \"" + policy + "\", \"key\": \"" + key + "\"}";
        return token == null
                ? server.post("/v1/check", body)
                : server.post("/v1/check", body, "Authorization", "Bearer " + token);
    }

    @Test
    void aCallWithoutACallersTokenIs401AndDecidesNothing() {
        HttpResponse<String> missing = check(null, "per-user", "checkout:alice");
        HttpResponse<String> wrong = check("guessed", "per-user", "checkout:alice");
        HttpResponse<String> charge =
                server.post("/v1/charge", "{\"policy\": \"per-user\", \"key\": \"checkout:alice\", \"cost\": 1000}");

        assertProblem(
                missing, 401, "The decision API needs a caller's bearer token: send Authorization: Bearer TOKEN.");
        assertThat(missing.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"tollgate decision api\"");
        assertProblem(wrong, 401, "The bearer token is not one of the callers' tokens.");
        assertThat(charge.statusCode()).isEqualTo(401);
        assertThat(check(CHECKOUT_TOKEN, "per-user", "checkout:alice").body())
                .as("nothing was decided or charged")
                .contains("\"remaining\":2");
    }

    @Test
    void aCallerIsServedOnlyItsPoliciesAndKeys() {
        HttpResponse<String> own = check(CHECKOUT_TOKEN, "per-user", "checkout:alice");
        HttpResponse<String> otherPolicy = check(CHECKOUT_TOKEN, "per-tenant", "checkout:alice");
        HttpResponse<String> otherKey = check(CHECKOUT_TOKEN, "per-user", "billing:alice");
        HttpResponse<String> batch = server.post(
                "/v1/check",
                "{\"checks\": [{\"policy\": \"per-user\", \"key\": \"checkout:bob\"},"
                        + " {\"policy\": \"per-user\", \"key\": \"billing:bob\"}]}",
                "Authorization",
                "Bearer " + CHECKOUT_TOKEN);
        HttpResponse<String> charge = server.post(
                "/v1/charge",
                "{\"policy\": \"per-user\", \"key\": \"billing:alice\", \"cost\": 1000}",
                "Authorization",
                "Bearer " + CHECKOUT_TOKEN);

        assertThat(own.statusCode()).isEqualTo(200);
        assertProblem(otherPolicy, 403, "Caller 'checkout' may not use policy 'per-tenant'; its policies: per-user.");
        assertProblem(otherKey, 403, "Caller 'checkout' may name only keys that start with 'checkout:'.");
        assertProblem(batch, 403, "Caller 'checkout' may name only keys that start with 'checkout:'.");
        assertProblem(charge, 403, "Caller 'checkout' may name only keys that start with 'checkout:'.");
        assertThat(check(BILLING_TOKEN, "per-user", "checkout:bob").body())
                .as("the batch decided nothing, not even its permitted check")
                .contains("\"remaining\":2");
        assertThat(check(BILLING_TOKEN, "per-user", "billing:alice").body())
                .as("the refused charge took nothing")
                .contains("\"remaining\":2");
    }

    @Test
    void eachCallersCallsAreCountedByOutcome() {
        check(CHECKOUT_TOKEN, "per-user", "checkout:carol");
        check(CHECKOUT_TOKEN, "per-tenant", "checkout:carol");
        check("guessed", "per-user", "checkout:carol");

        String metrics = server.management("GET", "/metrics").body();

        assertThat(metrics)
                .contains("tollgate_callers_requests_total{api=\"check\",caller=\"checkout\",outcome=\"served\"} 1.0")
                .contains(
                        "tollgate_callers_requests_total{api=\"check\",caller=\"checkout\",outcome=\"forbidden\"} 1.0")
                .contains(
                        "tollgate_callers_requests_total{api=\"check\",caller=\"unknown\",outcome=\"unauthenticated\"}"
                                + " 1.0")
                .doesNotContain(CHECKOUT_TOKEN, "guessed");
    }

    @Test
    void aReloadRevokesACallerAndItsTokenAtOnce() throws Exception {
        assertThat(check(CHECKOUT_TOKEN, "per-user", "checkout:dave").statusCode())
                .isEqualTo(200);

        Files.writeString(file, config(false));
        HttpResponse<String> reloaded = server.management("POST", "/admin/reload");

        assertThat(reloaded.body()).contains("\"reloaded\":true");
        assertThat(check(CHECKOUT_TOKEN, "per-user", "checkout:dave").statusCode())
                .isEqualTo(401);
        assertThat(check(BILLING_TOKEN, "per-user", "checkout:dave").statusCode())
                .isEqualTo(200);
    }

    @Test
    void envoysServiceAnswersUnauthenticatedAndPermissionDeniedAsGrpcSays() {
        RateLimitServiceGrpc.RateLimitServiceBlockingStub anonymous = RateLimitServiceGrpc.newBlockingStub(channel);
        RateLimitServiceGrpc.RateLimitServiceBlockingStub wrong = withToken("guessed");
        RateLimitServiceGrpc.RateLimitServiceBlockingStub edge = withToken("edge-envoy-token");

        assertThatThrownBy(() -> anonymous.shouldRateLimit(request("edge", descriptor("user", "alice"))))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        assertThatThrownBy(() -> wrong.shouldRateLimit(request("edge", descriptor("user", "alice"))))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        assertThat(edge.shouldRateLimit(request("edge", descriptor("user", "alice")))
                        .getOverallCode())
                .isEqualTo(Code.OK);
        assertThatThrownBy(() -> edge.shouldRateLimit(request("other", descriptor("user", "alice"))))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                    assertThat(e.getStatus().getDescription())
                            .isEqualTo("Caller 'edge-envoy' may name only keys that start with 'edge|'.");
                });
        assertThat(server.management("GET", "/metrics").body())
                .contains("tollgate_callers_requests_total{api=\"envoy\",caller=\"edge-envoy\",outcome=\"served\"} 1.0")
                .contains(
                        "tollgate_callers_requests_total{api=\"envoy\",caller=\"edge-envoy\",outcome=\"forbidden\"} 1.0")
                .contains(
                        "tollgate_callers_requests_total{api=\"envoy\",caller=\"unknown\",outcome=\"unauthenticated\"}"
                                + " 2.0");
    }

    private RateLimitServiceGrpc.RateLimitServiceBlockingStub withToken(String token) {
        Metadata metadata = new Metadata();
        metadata.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        return RateLimitServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(metadata));
    }

    @Test
    void badCallersAreRefusedByNameAndNoErrorShowsAToken() {
        String policies = "policies:\n  p:\n    limits:\n      - capacity: 5\n        refill: 1/s\n";

        assertThatThrownBy(() -> parse("callers:\n  - name: a\n" + policies))
                .hasMessageContaining("callers[0]: needs a token, a certificate-subject");
        assertThatThrownBy(() -> parse(
                        "callers:\n  - name: a\n    token: s3cret-1\n  - name: a\n    token: s3cret-2\n" + policies))
                .hasMessageContaining("callers[1].name: 'a' is also the name of callers[0].name")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> parse(
                        "callers:\n  - name: a\n    token: s3cret-1\n  - name: b\n    token: s3cret-1\n" + policies))
                .hasMessageContaining("callers[1].token: is the token of a too; give each caller its own")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> parse("callers:\n  - name: a\n    token: \"two words\"\n" + policies))
                .hasMessageContaining("callers[0].token: must be printable ASCII without spaces")
                .hasMessageNotContaining("two words");
        assertThatThrownBy(() -> parse("callers:\n  - name: a\n    token: t\n    policies: [q]\n" + policies))
                .hasMessageContaining("callers[0].policies[0]: unknown policy 'q'; defined: p");
        assertThatThrownBy(() -> parse("callers:\n  - name: a b\n    token: t\n" + policies))
                .hasMessageContaining("callers[0].name: must be 1 to 64 letters");
        assertThatThrownBy(
                        () -> parse("callers:\n  - name: a\n    token: {env: TOLLGATE_NO_SUCH_VARIABLE}\n" + policies))
                .hasMessageContaining(
                        "callers[0].token.env: the environment variable TOLLGATE_NO_SUCH_VARIABLE is not set");
        assertThatThrownBy(() ->
                        parse("callers:\n  - name: a\n    token: {file: " + dir.resolve("none") + "}\n" + policies))
                .hasMessageContaining(
                        "callers[0].token.file: cannot read the file '" + dir.resolve("none") + "': no such file");
        assertThatThrownBy(() -> parse("callers:\n  - name: a\n    token: {vault: x}\n" + policies))
                .hasMessageContaining("callers[0].token: must be the secret, {env: NAME} or {file: PATH}");
    }

    private static ServerConfig parse(String yaml) {
        return ServerConfig.parse(yaml, "t.yaml");
    }
}
