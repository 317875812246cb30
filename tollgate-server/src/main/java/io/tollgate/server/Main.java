package io.tollgate.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * The command line: {@code java -jar tollgate-server.jar --config FILE [--port N]}, or {@code --version}, or
 * {@code --help}. Prints {@code tollgate
 * listening on http://HOST:PORT} once the server accepts connections (after {@code tollgate management on
 * http://HOST:PORT} when the configuration sets a management port), reloads its configuration on SIGHUP, and runs until it is stopped (SIGTERM,
 * Ctrl-C), when it shuts down gracefully. Bad flags or a bad configuration exit with status 2 and a message
 * that names the problem (for the configuration: the file, the line and the setting); a server that cannot
 * start (the port is taken) exits with status 1.
 */
public final class Main {

    static final String USAGE = """
            Usage: java -jar tollgate-server.jar --config FILE [--port N]

            Runs the Tollgate rate-limiting server. With an upstream, a rate-limiting reverse proxy on its
            port, and the decision API (POST /v1/check) on server.decision-port; without one, the decision
            API, /healthz and /readyz on its port. Health, metrics and the admin API are served on
            server.management-port. With an envoy section, Envoy's rate limit service (gRPC) on a port of
            its own (see docs/envoy.md).

              --config FILE   the YAML configuration (see docs/server.md)
              --port N        listen on port N instead of the configuration's server.port; 0 picks a free one
              --version       print the version and exit
              --help          print this and exit
            """;

    private Main() {}

    /** Runs the server until the JVM is told to stop; exits with 2 for bad arguments, 1 if it cannot start. */
    public static void main(String[] args) {
        // Before any TLS is used, which reads it once: a client may not renegotiate a TLS 1.2 session, each
        // renegotiation costing this server a handshake that the client can ask for again at no cost of its own
        System.setProperty("jdk.tls.rejectClientInitiatedRenegotiation", "true");
        int status = run(args, System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /**
     * Parses the arguments and starts the server; returns the exit status for arguments that do not start
     * one (0 for {@code --help}), or blocks until the server stops and returns 0.
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Arguments arguments;
        try {
            arguments = Arguments.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("tollgate: " + e.getMessage());
            err.println("Try --help for usage.");
            return 2;
        }
        if (arguments.help()) {
            out.print(USAGE);
            return 0;
        }
        if (arguments.version()) {
            out.println("tollgate-server " + version());
            return 0;
        }
        ServerConfig config;
        try {
            config = ServerConfig.load(arguments.config());
            if (arguments.port() != null) {
                config = config.withPort(arguments.port());
            }
        } catch (IllegalArgumentException e) {
            err.println("tollgate: " + e.getMessage());
            return 2;
        }
        TollgateServer server;
        try {
            server = TollgateServer.start(config);
        } catch (Exception e) {
            Listeners.Management management = config.management();
            Listeners.DecisionPort decision = config.listeners().decision();
            String where = config.host() + ":" + config.port()
                    + (decision == null ? "" : " (decision API " + decision.host() + ":" + decision.port() + ")")
                    + (management == null ? "" : " (management " + management.host() + ":" + management.port() + ")");
            err.println("tollgate: cannot start on " + where + ": " + describe(e));
            return 1;
        }
        reloadOnHangUp(server, err);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.close();
                            stopped.countDown();
                        },
                        "tollgate-shutdown"));
        if (server.managementUri() != null) {
            out.println("tollgate management on " + server.managementUri());
        }
        if (server.decisionUri() != null) {
            out.println("tollgate decision api on " + server.decisionUri());
        }
        if (server.envoyAddress() != null) {
            out.println("tollgate envoy rls listening on " + server.envoyAddress());
        }
        out.println("tollgate listening on " + server.uri());
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.close();
        }
        return 0;
    }

    /**
     * Reloads the configuration on SIGHUP, as nginx and Envoy's users expect, instead of the JVM's default of
     * stopping. Where the platform has no SIGHUP (Windows), the file watch and the admin API remain.
     */
    private static void reloadOnHangUp(TollgateServer server, PrintStream err) {
        try {
            sun.misc.SignalHandler before =
                    sun.misc.Signal.handle(new sun.misc.Signal("HUP"), signal -> server.reload("SIGHUP"));
            if (before == sun.misc.SignalHandler.SIG_IGN) {
                // The JVM keeps a hang-up that the process was started ignoring (nohup) ignored, and says nothing
                err.println("tollgate: SIGHUP is ignored in this process (started under nohup?), so a hang-up does not"
                        + " reload; reload through the file or the admin API");
            }
        } catch (IllegalArgumentException e) {
            err.println("tollgate: no SIGHUP here (" + e.getMessage() + "); reload through the file or the admin API");
        }
    }

    /** Returns the server's version, as the build wrote it into {@code version.properties}. */
    static String version() {
        Properties build = new Properties();
        try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                build.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the version", e);
        }
        return build.getProperty("version", "unknown");
    }

    private static String describe(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
    }

    /** What the command line asked for. */
    record Arguments(Path config, Integer port, boolean help, boolean version) {

        static Arguments parse(String[] args) {
            Path config = null;
            Integer port = null;
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                switch (arg) {
                    case "--help", "-h" -> {
                        return new Arguments(null, null, true, false);
                    }
                    case "--version" -> {
                        return new Arguments(null, null, false, true);
                    }
                    case "--config" -> {
                        if (config != null) {
                            throw new IllegalArgumentException("--config given twice");
                        }
                        config = Path.of(value(args, ++i, arg));
                    }
                    case "--port" -> {
                        if (port != null) {
                            throw new IllegalArgumentException("--port given twice");
                        }
                        port = port(value(args, ++i, arg));
                    }
                    default ->
                        throw new IllegalArgumentException(
                                arg.startsWith("-") ? "unknown flag " + arg : "unexpected argument '" + arg + "'");
                }
            }
            if (config == null) {
                throw new IllegalArgumentException("--config FILE is required");
            }
            return new Arguments(config, port, false, false);
        }

        private static String value(String[] args, int at, String flag) {
            if (at >= args.length || args[at].startsWith("--")) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            return args[at];
        }

        private static int port(String text) {
            try {
                int port = Integer.parseInt(text);
                if (port >= 0 && port <= 65_535) {
                    return port;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException("--port must be 0 to 65535, was '" + text + "'");
        }
    }
}
