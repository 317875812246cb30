package io.tollgate.server;

import static io.tollgate.server.EnvoyRateLimitServiceTest.descriptor;
import static io.tollgate.server.EnvoyRateLimitServiceTest.headers;
import static io.tollgate.server.EnvoyRateLimitServiceTest.request;
import static io.tollgate.server.YamlNodes.list;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.server.internal.envoy.proto.RateLimitDescriptor;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.Code;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import io.tollgate.testing.RedisExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.yaml.snakeyaml.Yaml;

/**
 * Keeps examples/envoy/ and docs/envoy.md true. Envoy cannot be installed where Tollgate is built, so its
 * configurations are read as YAML, and the descriptors their rate limit actions make Envoy send are sent to
 * a server running the examples' own files, over gRPC, as Envoy would.
 */
@Timeout(60)
class EnvoyExamplesTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Path EXAMPLES = DocumentationExamples.PROJECT.resolve("examples/envoy");
    private static final String PAGE = "docs/envoy.md";

    private RunningServer server;
    private ManagedChannel channel;
    private RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

    @BeforeEach
    void startTheExamplesServer() throws Exception {
        redis.server().command("FLUSHALL");
        String file = Files.readString(EXAMPLES.resolve("tollgate.yaml"))
                .replace("redis://127.0.0.1:6379", redis.server().uri())
                .replace("port: 8081", "port: 0")
                .replace("management-port: 9090", "management-port: 0")
                .replace("config: examples/envoy/ratelimit/", "config: " + EXAMPLES.resolve("ratelimit"));
        server = RunningServer.start(file);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.server().envoyPort())
                .usePlaintext()
                .build();
        rls = RateLimitServiceGrpc.newBlockingStub(channel);
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        server.close();
    }

    private RateLimitResponse ask(String domain, RateLimitDescriptor descriptor) {
        return rls.withDeadlineAfter(20, TimeUnit.SECONDS).shouldRateLimit(request(domain, descriptor));
    }

    @Test
    void envoysFilterPointsAtTollgatesPortOverHttp2WithTheDomainOfTheRateLimitFile() throws Exception {
        Map<String, Object> envoy = yaml(Files.readString(EXAMPLES.resolve("envoy.yaml")));
        Map<String, Object> manager = at(envoy, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0);
        Map<String, Object> filter = at(manager, "typed_config", "http_filters", 0);
        Map<String, Object> tollgate = cluster(
                envoy,
                at(filter, "typed_config", "rate_limit_service", "grpc_service").get("envoy_grpc"));

        assertThat(filter.get("name")).isEqualTo("envoy.filters.http.ratelimit");
        assertThat(at(filter, "typed_config").get("domain")).isEqualTo("edge");
        assertThat(Files.readString(EXAMPLES.resolve("ratelimit/edge.yaml"))).contains("domain: edge");
        assertThat(at(filter, "typed_config", "rate_limit_service").get("transport_api_version"))
                .isEqualTo("V3");
        assertThat(at(
                        tollgate,
                        "typed_extension_protocol_options",
                        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                        "explicit_http_config"))
                .containsKey("http2_protocol_options");
        assertThat(at(tollgate, "load_assignment", "endpoints", 0, "lb_endpoints", 0, "endpoint", "address")
                        .toString())
                .contains("port_value=8081");
        assertThat(Files.readString(EXAMPLES.resolve("tollgate.yaml"))).contains("port: 8081");
    }

    @Test
    void everyDescriptorEnvoysActionsBuildMatchesALimitOfTheExample() throws Exception {
        Map<String, Object> envoy = yaml(Files.readString(EXAMPLES.resolve("envoy.yaml")));
        Map<String, Object> host = at(
                envoy,
                "static_resources",
                "listeners",
                0,
                "filter_chains",
                0,
                "filters",
                0,
                "typed_config",
                "route_config",
                "virtual_hosts",
                0);
        List<Object> rateLimits = new ArrayList<>(list(host.get("rate_limits")));
        for (Object route : list(host.get("routes"))) {
            Object routeLimits = at(route, "route").get("rate_limits");
            if (routeLimits != null) {
                rateLimits.addAll(list(routeLimits));
            }
        }

        assertThat(rateLimits).hasSize(3);
        for (Object rateLimit : rateLimits) {
            RateLimitDescriptor sent = descriptorOf(list(at(rateLimit).get("actions")));

            RateLimitResponse answer = ask("edge", sent);

            assertThat(answer.getOverallCode()).as("%s", sent).isEqualTo(Code.OK);
            assertThat(answer.getStatuses(0).hasCurrentLimit())
                    .as("%s matches a limit", sent)
                    .isTrue();
        }
    }

    @Test
    void theExampleLimitsAnswerAsTheirCommentsSay() {
        RateLimitResponse abuser = ask("edge", descriptor("remote_address", "203.0.113.7"));
        RateLimitResponse client = ask("edge", descriptor("remote_address", "198.51.100.1"));
        RateLimitResponse key = ask("edge", descriptor("generic_key", "api", "api_key", "k-1"));
        List<Code> search = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            search.add(rls.withDeadlineAfter(20, TimeUnit.SECONDS)
                    .shouldRateLimit(request("edge", descriptor("generic_key", "search")).toBuilder()
                            .setHitsAddend(20)
                            .build())
                    .getOverallCode());
        }

        assertThat(abuser.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(client.getStatuses(0).getCurrentLimit().getName()).isEqualTo("per_ip");
        assertThat(client.getStatuses(0).getLimitRemaining()).isEqualTo(59);
        assertThat(key.getStatuses(0).getLimitRemaining())
                .as("a burst of 100 of the 1000 an hour")
                .isEqualTo(99);
        assertThat(headers(key).get("RateLimit-Policy")).endsWith(";q=100;w=360");
        assertThat(search).as("shadow mode").containsOnly(Code.OK);
        assertThat(server.management("GET", "/metrics").body())
                .contains("domain=\"edge\",key=\"generic_key\",result=\"shadow_over_limit\"} 1.0");
    }

    @Test
    void thePagesEnvoyIstioAndEnvoyGatewayExamplesNameTheFilterDomainAndPort() {
        List<String> blocks = DocumentationExamples.blocks(PAGE, "yaml");
        String page = String.join("\n---\n", blocks);

        List<Object> documents = new ArrayList<>();
        for (String block : blocks) {
            new Yaml().loadAll(block).forEach(documents::add);
        }

        assertThat(blocks).hasSizeGreaterThanOrEqualTo(5);
        assertThat(documents).hasSizeGreaterThanOrEqualTo(blocks.size());
        assertThat(ServerConfig.parse(
                                blocks.get(0).replace("config: ratelimit/", "config: " + EXAMPLES.resolve("ratelimit")),
                                PAGE)
                        .envoy()
                        .port())
                .isEqualTo(8081);
        assertThat(blocks.get(1)).isEqualTo(readWithoutComments(EXAMPLES.resolve("ratelimit/edge.yaml")));
        assertThat(page)
                .contains("kind: EnvoyFilter")
                .contains("outbound|8081||tollgate.ratelimit.svc.cluster.local")
                .contains("kind: EnvoyPatchPolicy")
                .contains("port_value: 8081");
        assertThat(documents.stream().filter(document -> document.toString().contains("envoy.filters.http.ratelimit")))
                .hasSize(3);
    }

    private static String readWithoutComments(Path file) {
        try {
            StringBuilder text = new StringBuilder();
            for (String line : Files.readAllLines(file)) {
                if (!line.isBlank() && !line.strip().startsWith("#")) {
                    text.append(line).append('\n');
                }
            }
            return text.toString();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The descriptor Envoy builds from a list of actions, with a client's values where Envoy reads them. */
    private static RateLimitDescriptor descriptorOf(List<Object> actions) {
        List<String> entries = new ArrayList<>();
        for (Object action : actions) {
            Map<String, Object> each = at(action);
            if (each.containsKey("remote_address")) {
                entries.add("remote_address");
                entries.add("198.51.100.20");
            } else if (each.containsKey("generic_key")) {
                entries.add("generic_key");
                entries.add((String) at(each, "generic_key").get("descriptor_value"));
            } else if (each.containsKey("request_headers")) {
                entries.add((String) at(each, "request_headers").get("descriptor_key"));
                entries.add("k-2");
            } else {
                throw new AssertionError("an action this test does not know: " + each);
            }
        }
        return descriptor(entries.toArray(String[]::new));
    }

    private static Map<String, Object> cluster(Map<String, Object> envoy, Object grpc) {
        String name = (String) at(grpc).get("cluster_name");
        return StreamSupport.stream(
                        list(at(envoy, "static_resources").get("clusters")).spliterator(), false)
                .map(EnvoyExamplesTest::at)
                .filter(cluster -> name.equals(cluster.get("name")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no cluster " + name));
    }

    private static Map<String, Object> yaml(String text) {
        return new Yaml().load(text);
    }

    /** Follows map keys and list indexes from {@code node}. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> at(Object node, Object... path) {
        Object here = node;
        for (Object step : path) {
            here = step instanceof Integer index ? list(here).get(index) : ((Map<String, Object>) here).get(step);
            assertThat(here).as("%s in the example", step).isNotNull();
        }
        return (Map<String, Object>) here;
    }
}
