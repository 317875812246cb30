package io.tollgate.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code redis-server} process on a free loopback port, started for a test and stopped after it.
 * Tests may kill it, restart it on the same port, or freeze it (SIGSTOP) to simulate a hung server. It keeps
 * nothing on disk beyond its own temporary directory.
 *
 * <p>Never points at a Redis that the tests did not start. Not thread-safe: drive one server from one
 * test thread.
 */
public final class RedisServer implements AutoCloseable {

    static final String HOST = "127.0.0.1";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(15);

    private final Path binary;
    private final int port;
    private final int tlsPort;
    private final Path dir;
    private final List<String> arguments;
    private Process process;

    private RedisServer(Path binary, int port, List<String> extraArguments, String configFile, boolean tls) {
        this.binary = binary;
        this.port = port;
        this.tlsPort = tls ? FreePorts.pick() : -1;
        try {
            this.dir = Files.createTempDirectory("tollgate-redis-" + port + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> args = new ArrayList<>();
        if (configFile != null) {
            args.add(writeConfig(configFile).toString());
        }
        args.addAll(List.of(
                "--port",
                Integer.toString(port),
                "--bind",
                HOST,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.toString(),
                "--logfile",
                dir.resolve("redis.log").toString(),
                "--daemonize",
                "no"));
        if (tls) {
            Path certificate = copyResource("redis-test.crt");
            args.addAll(List.of(
                    "--tls-port", Integer.toString(tlsPort),
                    "--tls-cert-file", certificate.toString(),
                    "--tls-key-file", copyResource("redis-test.key").toString(),
                    "--tls-ca-cert-file", certificate.toString(),
                    "--tls-auth-clients", "no"));
        }
        if (RedisServerBinary.majorVersion(binary) >= 7) {
            args.addAll(List.of("--enable-debug-command", "local")); // tests use DEBUG SLEEP; 6.2 allows it anyway
        }
        args.addAll(extraArguments);
        this.arguments = List.copyOf(args);
        start();
    }

    /**
     * Starts a standalone server on a free port, with any extra {@code redis-server} arguments such as
     * {@code "--requirepass", "secret"}.
     */
    public static RedisServer start(String... extraArguments) {
        return new RedisServer(RedisServerBinary.find(), FreePorts.pick(), List.of(extraArguments), null, false);
    }

    /**
     * Starts a standalone server that also accepts TLS connections on {@link #tlsPort()}, with a self-signed
     * certificate for 127.0.0.1 ({@link #tlsCertificate()}). The plain port stays open for administration.
     */
    public static RedisServer startWithTls() {
        return new RedisServer(RedisServerBinary.find(), FreePorts.pick(), List.of(), null, true);
    }

    /**
     * Starts the Redis 6.2 binary that the {@code embedded-redis} jar ships, whatever is installed: for
     * checking that everything still works on the oldest Redis that Tollgate supports.
     */
    public static RedisServer startEmbedded(String... extraArguments) {
        return new RedisServer(RedisServerBinary.embedded(), FreePorts.pick(), List.of(extraArguments), null, false);
    }

    /** Starts a server with cluster mode enabled, not yet part of any cluster. */
    static RedisServer startClusterNode(List<String> extraArguments) {
        List<String> args = new ArrayList<>(List.of(
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000"));
        args.addAll(extraArguments);
        return new RedisServer(RedisServerBinary.find(), FreePorts.pick(), args, null, false);
    }

    /**
     * Starts a Sentinel that monitors {@code master} under the name {@code masterName}, with a quorum of
     * one. Connect to it with {@link #sentinelUri(String)}.
     */
    public static RedisServer startSentinel(RedisServer master, String masterName) {
        String config = "sentinel monitor " + masterName + " " + HOST + " " + master.port() + " 1\n"
                + "sentinel down-after-milliseconds " + masterName + " 2000\n"
                + "sentinel failover-timeout " + masterName + " 5000\n";
        return new RedisServer(RedisServerBinary.find(), FreePorts.pick(), List.of("--sentinel"), config, false);
    }

    /** Returns the port the server listens on. */
    public int port() {
        return port;
    }

    /** Returns {@code redis://127.0.0.1:PORT}. */
    public String uri() {
        return "redis://" + HOST + ":" + port;
    }

    /**
     * Returns the TLS port of a server started with {@link #startWithTls()}.
     *
     * @throws IllegalStateException for a server without TLS
     */
    public int tlsPort() {
        if (tlsPort < 0) {
            throw new IllegalStateException("this server was not started with TLS");
        }
        return tlsPort;
    }

    /** Returns the self-signed certificate (PEM) that a server started with TLS presents. */
    public Path tlsCertificate() {
        return dir.resolve("redis-test.crt");
    }

    /** For a Sentinel: returns {@code redis-sentinel://127.0.0.1:PORT#masterName}. */
    public String sentinelUri(String masterName) {
        return "redis-sentinel://" + HOST + ":" + port + "#" + masterName;
    }

    /**
     * Runs one command on a fresh connection and returns the reply (String, Long, List or null).
     *
     * @throws RedisErrorReply if Redis answers with an error
     * @throws UncheckedIOException if the server does not answer
     */
    public Object command(String... args) {
        try (RespConnection connection = new RespConnection(HOST, port, 5_000)) {
            return connection.call(args);
        }
    }

    /** Returns one field of {@code INFO}, such as {@code used_memory} or {@code redis_version}. */
    public String info(String field) {
        String info = (String) command("INFO", "everything");
        for (String line : info.split("\r\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1);
            }
        }
        throw new IllegalArgumentException("INFO has no field " + field);
    }

    /** Returns the server's clock ({@code TIME}) in microseconds since the Unix epoch. */
    public long timeMicros() {
        List<?> time = (List<?>) command("TIME");
        return Long.parseLong((String) time.get(0)) * 1_000_000 + Long.parseLong((String) time.get(1));
    }

    /** Returns the server's {@code INFO commandstats} calls of one command, such as {@code evalsha}. */
    public long commandCalls(String command) {
        String info = (String) command("INFO", "commandstats");
        for (String line : info.split("\r\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                for (String part : line.substring(line.indexOf(':') + 1).split(",")) {
                    if (part.startsWith("calls=")) {
                        return Long.parseLong(part.substring("calls=".length()));
                    }
                }
            }
        }
        return 0;
    }

    /** Kills the process at once (SIGKILL), as a crash would. */
    public void kill() {
        if (process != null) {
            process.destroyForcibly();
            waitForExit();
        }
    }

    /** Starts the process again on the same port, empty. */
    public void restart() {
        kill();
        start();
    }

    /** Freezes the process (SIGSTOP): it keeps its connections but answers nothing. */
    public void pause() {
        signal("STOP");
    }

    /** Lets a frozen process run again (SIGCONT). */
    public void resume() {
        signal("CONT");
    }

    /**
     * Undoes what a fault test did: starts the process again if it was killed (empty, on the same port), or
     * lets it run if it was frozen. Does nothing to a healthy server.
     */
    public void heal() {
        if (isRunning()) {
            resume();
        } else {
            restart();
        }
    }

    /** Returns whether the process is alive. */
    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Stops the process and removes its directory. */
    @Override
    public void close() {
        if (process != null) {
            resume();
            kill();
            process = null;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory left behind is harmless
        }
    }

    @Override
    public String toString() {
        return "redis-server on " + HOST + ":" + port + " (" + binary + ")";
    }

    private void start() {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(arguments);
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.redirectOutput(dir.resolve("stdout.log").toFile());
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + binary, e);
        }
        ProcessReaper.register(process);
        Instant deadline = Instant.now().plus(START_TIMEOUT);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server on port " + port + " exited at start:\n" + logs());
            }
            try (RespConnection connection = new RespConnection(HOST, port, 1_000)) {
                if ("PONG".equals(connection.call("PING"))) {
                    return;
                }
            } catch (UncheckedIOException notYet) {
                sleep(20);
            }
        }
        process.destroyForcibly();
        throw new IllegalStateException(
                "redis-server on port " + port + " did not answer within " + START_TIMEOUT + ":\n" + logs());
    }

    private Path copyResource(String name) {
        try (InputStream in = RedisServer.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from tollgate-test-support");
            }
            Path target = dir.resolve(name);
            Files.copy(in, target);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path writeConfig(String config) {
        try {
            return Files.writeString(dir.resolve("redis.conf"), config, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void signal(String signal) {
        if (process == null || !process.isAlive()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling redis-server", e);
        }
    }

    private void waitForExit() {
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("redis-server on port " + port + " did not exit");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server to exit", e);
        }
    }

    private String logs() {
        StringBuilder text = new StringBuilder();
        for (String name : List.of("stdout.log", "redis.log")) {
            Path file = dir.resolve(name);
            try {
                if (Files.exists(file)) {
                    text.append(Files.readString(file));
                }
            } catch (IOException ignored) {
                // best effort: the logs only explain a failure that is reported anyway
            }
        }
        return text.toString();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Returns the key-value pairs of {@code CLUSTER INFO} or a similar "key:value" reply. */
    static Map<String, String> fields(String reply) {
        Map<String, String> fields = new HashMap<>();
        for (String line : reply.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                fields.put(line.substring(0, colon), line.substring(colon + 1));
            }
        }
        return fields;
    }
}
