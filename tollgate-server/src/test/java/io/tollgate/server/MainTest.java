package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The command line, for everything that does not leave a server running. */
class MainTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @Test
    void helpPrintsUsageAndExitsZero() {
        int status = run("--help");

        assertThat(status).isZero();
        assertThat(out()).startsWith("Usage: java -jar tollgate-server.jar --config FILE [--port N]");
        assertThat(err()).isEmpty();
    }

    @Test
    void versionPrintsTheVersionOfTheBuildAndExitsZero() {
        int status = run("--version");

        assertThat(status).isZero();
        assertThat(out()).matches("tollgate-server \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\n");
        assertThat(err()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "'' | --config FILE is required",
                "--port 80 | --config FILE is required",
                "--config | --config needs a value",
                "--config a.yaml --port | --port needs a value",
                "--config a.yaml --port eighty | --port must be 0 to 65535, was 'eighty'",
                "--config a.yaml --port 65536 | --port must be 0 to 65535, was '65536'",
                "--config a.yaml --verbose | unknown flag --verbose",
                "--config a.yaml extra | unexpected argument 'extra'",
                "--config a.yaml --config b.yaml | --config given twice",
            })
    void badFlagsExitTwoWithAMessage(String args, String message) {
        int status = run(args.isBlank() ? new String[0] : args.split(" "));

        assertThat(status).isEqualTo(2);
        assertThat(err()).isEqualTo("tollgate: " + message + "\nTry --help for usage.\n");
        assertThat(out()).isEmpty();
    }

    @Test
    void aBadConfigurationExitsTwoNamingTheFileAndTheLine(@TempDir Path dir) throws Exception {
        Path config = Files.writeString(dir.resolve("tollgate.yaml"), """
                policies:
                  per-client:
                    limits:
                      - capacity: 0
                        refill: 5/s
                """);

        int status = run("--config", config.toString());

        assertThat(status).isEqualTo(2);
        assertThat(err())
                .isEqualTo("tollgate: " + config
                        + ":4: policies.per-client.limits[0]: capacity must be at least 1, was 0\n");
    }

    @Test
    void aMissingConfigurationExitsTwo(@TempDir Path dir) {
        int status = run("--config", dir.resolve("absent.yaml").toString());

        assertThat(status).isEqualTo(2);
        assertThat(err()).contains("cannot read config file", "absent.yaml", "no such file");
    }

    @Test
    void aPortThatIsTakenExitsOne(@TempDir Path dir) throws Exception {
        Path config = Files.writeString(dir.resolve("tollgate.yaml"), "server: {host: 127.0.0.1}\n");
        try (ServerSocket taken = new ServerSocket(0)) {
            int status = run("--config", config.toString(), "--port", Integer.toString(taken.getLocalPort()));

            assertThat(status).isEqualTo(1);
            assertThat(err())
                    .startsWith("tollgate: cannot start on 127.0.0.1:" + taken.getLocalPort() + ": ")
                    .contains("in use")
                    .doesNotContain("\tat ");
        }
    }

    private int run(String... args) {
        return Main.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    }
}
