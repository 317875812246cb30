package io.tollgate.server;

import static io.tollgate.server.YamlNodes.list;
import static io.tollgate.server.YamlNodes.map;
import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.redis.internal.store.RedisStoreProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * Keeps examples/kubernetes/ true without a cluster: each manifest's embedded server file is a valid
 * configuration, and the container's ports, probes, arguments and mounts agree with it.
 */
class KubernetesExamplesTest {

    private static final Path EXAMPLES = DocumentationExamples.PROJECT.resolve("examples/kubernetes");

    @TempDir
    Path dir;

    @Test
    void theSharedRateLimitServiceServesEnvoyOnTheGrpcPortItsServiceAndProbeName() throws IOException {
        List<Map<String, Object>> documents = documents("rate-limit-service.yaml");
        Map<String, Object> files = map(kind(documents, "ConfigMap").get("data"));
        Files.createDirectories(dir.resolve("ratelimit"));
        Files.writeString(dir.resolve("ratelimit/ratelimit.yaml"), (String) files.get("ratelimit.yaml"));

        ServerConfig config = ServerConfig.parse(
                withToken(((String) files.get("tollgate.yaml"))
                        .replace("/config/ratelimit/", dir.resolve("ratelimit") + "/")),
                "rate-limit-service.yaml");
        Map<String, Object> pod =
                map(map(map(kind(documents, "Deployment").get("spec")).get("template"))
                        .get("spec"));
        Map<String, Object> container = map(list(pod.get("containers")).get(0));
        Map<String, Object> service = map(kind(documents, "Service").get("spec"));

        assertThat(config.store()).isInstanceOf(RedisStoreProvider.Settings.class);
        assertThat(ports(container))
                .containsEntry("http", config.port())
                .containsEntry("grpc", config.envoy().port())
                .containsEntry("management", config.management().port());
        assertThat(map(map(container.get("readinessProbe")).get("grpc")).get("port"))
                .isEqualTo(config.envoy().port());
        assertThat(list(container.get("args"))).containsExactly("--config", "/config/tollgate.yaml");
        assertThat(list(container.get("volumeMounts")).stream()
                        .map(mount -> map(mount).get("mountPath")))
                .containsExactly("/config/tollgate.yaml", "/config/ratelimit/ratelimit.yaml");
        assertThat(list(service.get("ports")).stream()
                        .map(port -> map(port).get("name") + ":" + map(port).get("port")))
                .containsExactly("grpc:8081", "http:8080");
        assertThat(map(pod.get("securityContext")).get("runAsNonRoot")).isEqualTo(true);
        assertThat(config.management().token())
                .as("the management port, reached from outside the pod")
                .isNotNull();
        assertThat(map(map(container.get("livenessProbe")).get("httpGet"))).containsEntry("port", "http");
        assertThat(OpenPorts.envoyUnauthenticated(config))
                .as("Envoy's pods call the gRPC port")
                .isTrue();
        Map<String, Object> grpcIngress =
                map(list(map(kind(documents, "NetworkPolicy").get("spec")).get("ingress"))
                        .get(0));
        assertThat(list(grpcIngress.get("ports")))
                .containsExactly(Map.of("port", config.envoy().port()));
        assertThat(map(map(list(grpcIngress.get("from")).get(0)).get("podSelector"))
                        .get("matchLabels"))
                .isEqualTo(Map.of("tollgate-client", "envoy"));
    }

    /** The file with the management token its pod reads from a Secret written in, as the environment gives it. */
    private static String withToken(String file) {
        return file.replace("{env: TOLLGATE_MANAGEMENT_TOKEN}", "from-the-secret");
    }

    @Test
    void theSidecarProxiesToTheApplicationInItsPodIsProbedOnItsPublicPortAndScrapedWithAToken() throws IOException {
        List<Map<String, Object>> documents = documents("sidecar.yaml");
        String file = (String) map(kind(documents, "ConfigMap").get("data")).get("tollgate.yaml");

        ServerConfig config = ServerConfig.parse(withToken(file), "sidecar.yaml");
        Map<String, Object> pod =
                map(map(map(kind(documents, "Deployment").get("spec")).get("template"))
                        .get("spec"));
        List<Object> containers = list(pod.get("containers"));
        Map<String, Object> application = map(containers.get(0));
        Map<String, Object> tollgate = map(containers.get(1));

        assertThat(config.upstream()).hasToString("http://127.0.0.1:9000");
        assertThat(map(list(application.get("ports")).get(0)).get("containerPort"))
                .isEqualTo(config.upstream().getPort());
        assertThat(config.rules()).hasSize(1);
        assertThat(ports(tollgate))
                .containsEntry("http", config.port())
                .containsEntry("management", config.management().port());
        assertThat(map(map(tollgate.get("readinessProbe")).get("httpGet")))
                .containsEntry("path", "/readyz")
                .containsEntry("port", "http");
        assertThat(config.listeners().exposure().health())
                .as("the kubelet probes the public port")
                .isTrue();
        assertThat(config.management().host()).isEqualTo("0.0.0.0");
        assertThat(config.management().token())
                .as("Prometheus scrapes from outside the pod")
                .isNotNull();
        assertThat(kind(documents, "Secret").get("stringData")).isEqualTo(Map.of("management-token", "change-me"));
    }

    private static Map<String, Integer> ports(Map<String, Object> container) {
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (Object port : list(container.get("ports"))) {
            ports.put((String) map(port).get("name"), (Integer) map(port).get("containerPort"));
        }
        return ports;
    }

    private static List<Map<String, Object>> documents(String file) throws IOException {
        List<Map<String, Object>> documents = new ArrayList<>();
        for (Object document : new Yaml().loadAll(Files.readString(EXAMPLES.resolve(file)))) {
            documents.add(map(document));
        }
        return documents;
    }

    private static Map<String, Object> kind(List<Map<String, Object>> documents, String kind) {
        return documents.stream()
                .filter(document -> kind.equals(document.get("kind")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind));
    }
}
