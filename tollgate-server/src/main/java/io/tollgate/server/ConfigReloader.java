package io.tollgate.server;

import io.tollgate.RateLimiter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * Reads the server's configuration file again and swaps what it sets in whole: on {@link #reload} (the admin
 * API's {@code POST /admin/reload}, and SIGHUP through {@link Main}), and when the file changes, or one of the
 * Envoy rate limit files it names, which it looks for every second. The new file is checked in full first: a bad one changes nothing, is logged with
 * its file and line, and counted ({@code tollgate.config.reloads}, {@code result} = {@code failed}). The
 * policies, rules, client IPs, responses and Envoy rate limits change at once, and the buckets stay (a policy whose limits
 * changed keeps each key's spent tokens, converted); where the server and Envoy's service listen, its store,
 * upstream and management port change only at the next start, which the log and the answer say. Thread-safe: reloads
 * run one at a time.
 */
final class ConfigReloader implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /**
     * What a reload did.
     *
     * @param reloaded whether the new configuration runs now
     * @param detail what happened, for the log and the admin API
     * @param restartRequired changed settings that take effect only at the next start
     */
    record Result(boolean reloaded, String detail, List<String> restartRequired) {}

    /** Each watched file's path, modification time and size. */
    private record Seen(List<String> files) {}

    private final AtomicReference<Limits> limits;
    private final RateLimiter limiter;
    private final ServerMetrics metrics;
    private final Path file;
    private final ScheduledExecutorService watcher;
    private Seen seen;

    /**
     * Reloads into {@code limits}, on {@code limiter}; watches the file that its configuration was read from,
     * if any.
     */
    ConfigReloader(AtomicReference<Limits> limits, RateLimiter limiter, ServerMetrics metrics) {
        this.limits = limits;
        this.limiter = limiter;
        this.metrics = metrics;
        this.file = limits.get().config().source();
        if (file == null) {
            this.watcher = null;
            return;
        }
        this.seen = seen();
        this.watcher = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "tollgate-config-watch");
            thread.setDaemon(true);
            return thread;
        });
        watcher.scheduleWithFixedDelay(this::reloadIfChanged, 1, 1, TimeUnit.SECONDS);
    }

    /** Whether the configuration came from a file, which a reload reads again. */
    boolean canReload() {
        return file != null;
    }

    /**
     * Reads the file again and, if it is valid, runs what it sets from now on.
     *
     * @param trigger what asked, for the log, such as {@code SIGHUP}
     */
    synchronized Result reload(String trigger) {
        Objects.requireNonNull(trigger, "trigger");
        if (file == null) {
            return new Result(false, "this server was not started from a configuration file", List.of());
        }
        seen = seen();
        ServerConfig running = limits.get().config();
        ServerConfig next;
        try {
            next = running.reread();
        } catch (IllegalArgumentException e) {
            metrics.reloaded(false);
            LOG.log(
                    Level.WARNING,
                    "tollgate: configuration not reloaded ({0}), the running one stays: {1}",
                    trigger,
                    e.getMessage());
            return new Result(false, e.getMessage(), List.of());
        }
        List<String> restart = StartOnlySettings.changed(running, next);
        limits.set(Limits.of(running.reloadedAs(next), limiter, metrics, limits.get()));
        metrics.reloaded(true);
        String detail = "reloaded " + file + ": " + counted(next.policies().size(), "policy", "policies") + ", "
                + counted(next.rules().size(), "rule", "rules")
                + (restart.isEmpty()
                        ? ""
                        : "; changed, taking effect at the next start: " + String.join(", ", restart));
        LOG.log(restart.isEmpty() ? Level.INFO : Level.WARNING, "tollgate: {0} ({1})", detail, trigger);
        return new Result(true, detail, restart);
    }

    private void reloadIfChanged() {
        try {
            Seen now = seen();
            boolean changed;
            synchronized (this) {
                changed = now != null && !now.equals(seen);
            }
            if (changed) {
                reload("the file changed");
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "tollgate: watching " + file + " failed", e);
        }
    }

    /**
     * The configuration file's modification time and size, and those of the Envoy rate limit files it names,
     * or null while the configuration file cannot be read (being replaced).
     */
    private Seen seen() {
        List<String> files = new ArrayList<>();
        if (!stamp(file, files)) {
            return null;
        }
        EnvoyListener envoy = limits.get().config().envoy();
        if (envoy != null && envoy.config() != null) {
            Path config = envoy.config();
            if (Files.isDirectory(config)) {
                try (Stream<Path> listed = Files.list(config)) {
                    listed.sorted().forEach(each -> stamp(each, files));
                } catch (IOException | UncheckedIOException e) {
                    files.add(config + " unreadable");
                }
            } else {
                stamp(config, files);
            }
        }
        return new Seen(files);
    }

    /** Adds the file's stamp to {@code files}; returns whether it could be read. */
    private static boolean stamp(Path file, List<String> files) {
        try {
            FileTime modified = Files.getLastModifiedTime(file);
            files.add(file + " " + modified + " " + Files.size(file));
            return true;
        } catch (IOException e) {
            files.add(file + " unreadable");
            return false;
        }
    }

    @Override
    public void close() {
        if (watcher != null) {
            watcher.shutdownNow();
        }
    }

    /** Returns {@code count} and the noun, in the singular for one: {@code 1 policy}, {@code 2 policies}. */
    private static String counted(int count, String one, String many) {
        return count + " " + (count == 1 ? one : many);
    }
}
