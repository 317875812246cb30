package io.tollgate.http;

import io.tollgate.config.ConfigException;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A table from client key to policy name kept in a file of its own, YAML or {@code .properties}, that is read
 * again when it changes: the file's modification time is looked at most once a second, by the request that
 * finds the second past. A file that can no longer be read or parsed keeps the table it had, and the log says
 * why, once per change. Thread-safe.
 */
final class KeyTableFile implements PolicySource {

    private static final System.Logger LOG = System.getLogger(KeyTableFile.class.getName());
    private static final long CHECK_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private record Snapshot(Map<String, String> plans, FileTime modified, long checkedNanos) {}

    private final Path file;
    private final AtomicBoolean checking = new AtomicBoolean();
    private volatile Snapshot snapshot;

    KeyTableFile(Path file) {
        this.file = Objects.requireNonNull(file, "file");
        try {
            FileTime modified = Files.getLastModifiedTime(file);
            this.snapshot = new Snapshot(read(file), modified, System.nanoTime());
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("cannot read API key file '" + file + "': no such file", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read API key file '" + file + "': " + e.getMessage(), e);
        }
    }

    @Override
    public String policyName(HttpRequestView request, String key) {
        Snapshot current = snapshot;
        if (System.nanoTime() - current.checkedNanos() > CHECK_EVERY_NANOS && checking.compareAndSet(false, true)) {
            try {
                current = refreshed(current);
                snapshot = current;
            } finally {
                checking.set(false);
            }
        }
        return current.plans().get(key);
    }

    /** Returns the table as the file now holds it, or {@code current} if it has not changed or is broken. */
    private Snapshot refreshed(Snapshot current) {
        long now = System.nanoTime();
        FileTime modified;
        try {
            modified = Files.getLastModifiedTime(file);
        } catch (IOException e) {
            return new Snapshot(current.plans(), current.modified(), now); // a file being replaced
        }
        if (modified.equals(current.modified())) {
            return new Snapshot(current.plans(), current.modified(), now);
        }
        try {
            Map<String, String> plans = read(file);
            LOG.log(Level.INFO, "Tollgate: read API key file {0} again: {1} keys", file, plans.size());
            return new Snapshot(plans, modified, now);
        } catch (IOException | IllegalArgumentException e) {
            LOG.log(
                    Level.WARNING,
                    "Tollgate: API key file {0} changed but cannot be read; keeping its last table: {1}",
                    file,
                    e.getMessage());
            return new Snapshot(current.plans(), modified, now);
        }
    }

    /** Returns the table the file holds. */
    Map<String, String> plans() {
        return snapshot.plans();
    }

    @Override
    public String describe() {
        return "api-keys-file:" + file;
    }

    @Override
    public String toString() {
        return "KeyTableFile[" + file + ", " + snapshot.plans().size() + " keys]";
    }

    private static Map<String, String> read(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        Map<String, String> plans = new LinkedHashMap<>();
        if (file.getFileName().toString().endsWith(".properties")) {
            Properties properties = new Properties();
            try {
                properties.load(new StringReader(text));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
            }
            properties
                    .stringPropertyNames()
                    .forEach(key -> plans.put(key, properties.getProperty(key).strip()));
            return Map.copyOf(plans);
        }
        try {
            YamlConfig.parse(text).entries().forEach((key, plan) -> plans.put(key, plan.requiredString()));
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.messageIn(file.toString()), e);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        return Map.copyOf(plans);
    }
}
