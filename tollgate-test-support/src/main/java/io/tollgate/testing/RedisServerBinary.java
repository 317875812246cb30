package io.tollgate.testing;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds a {@code redis-server} binary: the one named by the system property {@code tollgate.redis-server},
 * else the first on {@code PATH}, else the one shipped inside the {@code embedded-redis} jar (Redis 6.2),
 * extracted once per JVM. Setting the property to {@code embedded} forces the shipped one.
 */
final class RedisServerBinary {

    static final String PROPERTY = "tollgate.redis-server";

    private static Path extracted;
    private static final Map<Path, Integer> VERSIONS = new ConcurrentHashMap<>();

    private RedisServerBinary() {}

    static synchronized Path find() {
        String configured = System.getProperty(PROPERTY, "");
        if (configured.equals("embedded")) {
            return embedded();
        }
        if (!configured.isEmpty()) {
            return Path.of(configured);
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, "redis-server");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return embedded();
    }

    /** Returns the major version of a redis-server binary, from {@code redis-server --version}. */
    static int majorVersion(Path binary) {
        return VERSIONS.computeIfAbsent(binary, path -> {
            try {
                Process process = new ProcessBuilder(path.toString(), "--version")
                        .redirectErrorStream(true)
                        .start();
                String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                process.waitFor();
                Matcher version = Pattern.compile("v=(\\d+)\\.").matcher(output);
                return version.find() ? Integer.parseInt(version.group(1)) : 0;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot run " + path + " --version", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 0;
            }
        });
    }

    static synchronized Path embedded() {
        if (extracted != null) {
            return extracted;
        }
        String resource = embeddedResourceName();
        try (InputStream binary = RedisServerBinary.class.getResourceAsStream("/" + resource)) {
            if (binary == null) {
                throw new IllegalStateException("no redis-server on PATH and no " + resource
                        + " in the embedded-redis jar: install Redis or set -D" + PROPERTY);
            }
            Path dir = Files.createTempDirectory("tollgate-redis-binary-");
            Path target = dir.resolve(resource);
            Files.copy(binary, target, StandardCopyOption.REPLACE_EXISTING);
            if (!target.toFile().setExecutable(true)) {
                throw new IllegalStateException("cannot make " + target + " executable");
            }
            target.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            extracted = target;
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract " + resource, e);
        }
    }

    private static String embeddedResourceName() {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        boolean arm = arch.contains("aarch64") || arch.contains("arm64");
        if (os.contains("linux")) {
            return arm ? "redis-server-6.2.7-linux-arm64" : "redis-server-6.2.6-v5-linux-amd64";
        }
        if (os.contains("mac")) {
            return arm ? "redis-server-6.2.6-v5-darwin-arm64" : "redis-server-6.2.6-v5-darwin-amd64";
        }
        throw new IllegalStateException(
                "no embedded redis-server for " + os + "/" + arch + ": install Redis or set -D" + PROPERTY);
    }
}
