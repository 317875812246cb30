package io.tollgate.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The built jar, {@code target/tollgate-server.jar}, run as its own process with {@code java -jar}, as a
 * user runs it. Its standard output and error are collected line by line.
 */
final class ServerProcess implements AutoCloseable {

    static final Path JAR = Path.of("target", "tollgate-server.jar");
    private static final Pattern LISTENING = Pattern.compile("tollgate listening on https?://([^:]+):(\\d+)");

    private final Process process;
    private final List<String> out = new CopyOnWriteArrayList<>();
    private final List<String> err = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Integer> port = new CompletableFuture<>();
    private final List<Thread> readers = new ArrayList<>();

    private ServerProcess(List<String> command) throws IOException {
        process = new ProcessBuilder(command).start();
        collect(process.getInputStream(), out, true);
        collect(process.getErrorStream(), err, false);
    }

    /** Runs {@code java [jvmOptions] -jar tollgate-server.jar ARGS} and returns without waiting. */
    static ServerProcess run(List<String> jvmOptions, String... args) throws IOException {
        if (!Files.isRegularFile(JAR)) {
            throw new IllegalStateException(JAR.toAbsolutePath() + " is missing: it is built by mvn package");
        }
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-jar");
        command.add(JAR.toString());
        command.addAll(List.of(args));
        return new ServerProcess(command);
    }

    /**
     * Runs {@code java -cp tollgate-server.jar:EXTRA... io.tollgate.server.Main ARGS}, the jar with more on its class
     * path (such as a store of one's own), and returns without waiting.
     */
    static ServerProcess runWith(List<Path> classPath, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        List<String> entries = new ArrayList<>();
        entries.add(JAR.toString());
        classPath.forEach(entry -> entries.add(entry.toString()));
        command.add(String.join(java.io.File.pathSeparator, entries));
        command.add(Main.class.getName());
        command.addAll(List.of(args));
        return new ServerProcess(command);
    }

    /**
     * Runs {@code java -p MODULES... -m io.tollgate.server/io.tollgate.server.Main ARGS}, the server's module with its
     * dependencies on the module path, and returns without waiting.
     */
    static ServerProcess onModulePath(List<Path> modulePath, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--module-path");
        command.add(String.join(
                java.io.File.pathSeparator,
                modulePath.stream().map(Path::toString).toList()));
        command.add("--module");
        command.add("io.tollgate.server/" + Main.class.getName());
        command.addAll(List.of(args));
        return new ServerProcess(command);
    }

    /**
     * Starts a server as {@link #start} does, from a shell that ignores SIGHUP first, as {@code nohup} does: the
     * process is started with hang-ups ignored.
     */
    static ServerProcess startIgnoringHangUps(Path config) throws Exception {
        List<String> command = new ArrayList<>(List.of("sh", "-c", "trap '' HUP; exec \"$0\" \"$@\""));
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of("-jar", JAR.toString(), "--config", config.toString(), "--port", "0"));
        ServerProcess server = new ServerProcess(command);
        try {
            server.awaitPort();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /**
     * Whether this JVM was started with SIGHUP ignored (under {@code nohup}): a server it starts inherits that, and
     * cannot reload on a hang-up. Read from Linux's {@code /proc/self/status}; false where there is none.
     */
    static boolean hangUpsIgnoredHere() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("SigIgn:")) {
                    return (Long.parseUnsignedLong(
                                            line.substring("SigIgn:".length()).trim(), 16)
                                    & 1)
                            != 0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return false;
    }

    /** Starts a server with the given configuration file on a free port and waits until it listens. */
    static ServerProcess start(Path config, String... jvmOptions) throws Exception {
        ServerProcess server = run(List.of(jvmOptions), "--config", config.toString(), "--port", "0");
        try {
            server.awaitPort();
        } catch (RuntimeException e) {
            server.close(); // a server that never said it listens must not outlive the test
            throw e;
        }
        return server;
    }

    /**
     * Returns the port from the {@code tollgate listening on} line, waiting up to 60 s for it: the server says
     * it listens after its warm-up, which may take 20 s ({@code WarmUp.LIMIT}), and several servers starting
     * at once on two busy cores have taken more than 30 s all told.
     */
    int awaitPort() throws Exception {
        try {
            return port.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("no 'tollgate listening on' line; out " + out + ", err " + err, e);
        }
    }

    /** Returns the decision port from its printed line, once the server listens. */
    int decisionPort() throws Exception {
        return printedPort("tollgate decision api on ");
    }

    /** Returns the management port from its printed line, once the server listens. */
    int managementPort() throws Exception {
        return printedPort("tollgate management on ");
    }

    private int printedPort(String prefix) throws Exception {
        awaitPort(); // every port's line comes before the listening one
        for (String line : out) {
            if (line.startsWith(prefix)) {
                return Integer.parseInt(line.substring(line.lastIndexOf(':') + 1));
            }
        }
        throw new IllegalStateException("no '" + prefix + "' line; out " + out);
    }

    /** Waits for the process to end and returns its exit status. */
    int awaitExit() throws InterruptedException {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("still running after 30 s; err " + err);
        }
        for (Thread reader : readers) {
            reader.join(5_000); // the last lines may still be on their way
        }
        return process.exitValue();
    }

    /**
     * Sends SIGTERM, as a service manager stops a service. Not with {@link Process#destroy()}, which also
     * closes this side of the pipes, so that what the server logs while it stops would be lost.
     */
    void terminate() throws IOException, InterruptedException {
        signal("TERM");
    }

    /** Sends the signal {@code name}, such as {@code HUP}. */
    void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
        }
    }

    /** Whether the process still runs. */
    boolean isAlive() {
        return process.isAlive();
    }

    List<String> out() {
        return out;
    }

    /** Returns the standard error so far: the log. */
    String err() {
        return String.join("\n", err);
    }

    private void collect(InputStream stream, List<String> lines, boolean watchForPort) {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    lines.add(line);
                    Matcher listening = LISTENING.matcher(line);
                    if (watchForPort && listening.matches()) {
                        port.complete(Integer.parseInt(listening.group(2)));
                    }
                }
            } catch (IOException e) {
                // the process is gone
            }
        });
        reader.setDaemon(true);
        reader.start();
        readers.add(reader);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
