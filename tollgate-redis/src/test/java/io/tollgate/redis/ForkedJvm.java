package io.tollgate.redis;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A program of this module's test classes in a JVM of its own, on the module's runtime class path only (as
 * the build wrote it to {@code target/runtime-classpath.txt}): for tests of what a plain program prints, and
 * of an instance that is killed.
 */
final class ForkedJvm {

    private ForkedJvm() {}

    /** Returns a process builder for {@code main} with {@code arguments}, not yet started. */
    static ProcessBuilder of(Class<?> main, String... arguments) throws IOException {
        String classpath = String.join(
                File.pathSeparator,
                Path.of("target", "classes").toString(),
                Path.of("target", "test-classes").toString(),
                Files.readString(Path.of("target", "runtime-classpath.txt")).strip());
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classpath, main.getName()));
        command.addAll(List.of(arguments));
        return new ProcessBuilder(command);
    }
}
