package io.tollgate.server;

import static io.tollgate.server.YamlNodes.list;
import static io.tollgate.server.YamlNodes.map;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The container image that the {@code container-image} profile writes ({@code
 * target/tollgate-server-image.tar}, in {@code docker save}'s format): its configuration runs the server as
 * a user that is not root, with the configuration file in the {@code /config} volume, and exposes the
 * server's three ports. Run by failsafe in that profile only, after Jib has written the image.
 */
class ContainerImageCheck {

    private static final Path IMAGE = Path.of(System.getProperty("tollgate.image", "target/tollgate-server-image.tar"));

    @Test
    void theImageRunsTheServerAsNonRootWithItsConfigurationInAVolumeAndExposesItsPorts() throws IOException {
        Map<String, byte[]> image = untar(Files.newInputStream(IMAGE));
        List<Map<String, Object>> manifest = json(image.get("manifest.json"));
        Map<String, Object> configuration =
                json(image.get((String) manifest.get(0).get("Config")));
        Map<String, Object> container = map(configuration.get("config"));

        assertThat(configuration.get("os")).isEqualTo("linux");
        assertThat(list(container.get("Entrypoint")))
                .startsWith("java", "-XX:MaxRAMPercentage=75", "-cp")
                .endsWith("io.tollgate.server.Main");
        assertThat(list(container.get("Cmd"))).containsExactly("--config", "/config/tollgate.yaml");
        assertThat(map(container.get("ExposedPorts"))).containsOnlyKeys("8080/tcp", "8081/tcp", "9090/tcp");
        assertThat(map(container.get("Volumes"))).containsOnlyKeys("/config");
        assertThat(container.get("WorkingDir")).isEqualTo("/config");
        assertThat((String) container.get("User")).isEqualTo("65532:65532").doesNotStartWith("0");
        assertThat(map(container.get("Labels"))).containsKey("org.opencontainers.image.version");
    }

    @Test
    void theImageHoldsTheServersClassesAndItsDependencies() throws IOException {
        Map<String, byte[]> image = untar(Files.newInputStream(IMAGE));
        List<Map<String, Object>> manifest = json(image.get("manifest.json"));

        List<String> files = new ArrayList<>();
        for (Object layer : list(manifest.get(0).get("Layers"))) {
            files.addAll(untar(new GZIPInputStream(new ByteArrayInputStream(image.get((String) layer))))
                    .keySet());
        }

        assertThat(files)
                .anyMatch(file -> file.endsWith("app/classes/io/tollgate/server/Main.class"))
                .anyMatch(file -> file.matches(".*app/libs/tollgate-core-.*\\.jar"))
                .anyMatch(file -> file.matches(".*app/libs/grpc-netty-shaded-.*\\.jar"))
                .anyMatch(file -> file.endsWith("app/jib-classpath-file"));
    }

    /** The regular files of a tar stream, by name: the ustar format Jib writes (names under 100 bytes). */
    private static Map<String, byte[]> untar(InputStream tar) throws IOException {
        Map<String, byte[]> files = new LinkedHashMap<>();
        try (tar) {
            byte[] header = new byte[512];
            while (tar.readNBytes(header, 0, 512) == 512 && header[0] != 0) {
                String name = field(header, 0, 100);
                String prefix = field(header, 345, 155);
                long size = Long.parseLong(field(header, 124, 12).strip(), 8);
                byte[] content = tar.readNBytes((int) size);
                tar.skipNBytes((512 - size % 512) % 512);
                char type = (char) header[156];
                if (type == '0' || type == 0) {
                    files.put(prefix.isEmpty() ? name : prefix + "/" + name, content);
                }
            }
        }
        return files;
    }

    private static String field(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.UTF_8);
    }

    /** JSON is YAML: SnakeYAML, already the server's, reads it. */
    @SuppressWarnings("unchecked")
    private static <T> T json(byte[] text) {
        assertThat(text).as("a file the image should hold").isNotNull();
        return (T) new Yaml().load(new String(text, StandardCharsets.UTF_8));
    }
}
