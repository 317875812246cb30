package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** The programs from Debian that tests run in front of the server (nginx, Caddy): started, and waited for. */
final class ProxyProcesses {

    private ProxyProcesses() {}

    /**
     * Starts {@code command} in {@code dir}, its output to {@code log}, and returns once it listens on {@code port}
     * of the loopback; fails, with the log, if it exits first or does not listen within 10 s.
     */
    static Process start(ProcessBuilder command, Path dir, Path log, int port) throws Exception {
        Process process = command.directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        String name = Path.of(command.command().get(0)).getFileName().toString();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!listening(port)) {
            assertThat(process.isAlive())
                    .as("%s runs: %s", name, Files.readString(log))
                    .isTrue();
            assertThat(System.nanoTime()).as("%s listens within 10 s", name).isLessThan(deadline);
            Thread.sleep(20);
        }
        return process;
    }

    private static boolean listening(int port) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
