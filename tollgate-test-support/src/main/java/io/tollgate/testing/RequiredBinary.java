package io.tollgate.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * A program from Debian's packages that a test drives ({@code promtool}, {@code chromium}, {@code nginx}):
 * found on {@code PATH}, else the test is skipped saying which package provides it, except under {@code
 * CI=true}, where {@code .ci/run} installs the packages first and a missing program fails the test.
 */
public final class RequiredBinary {

    private RequiredBinary() {}

    /**
     * Returns the path of {@code command} on {@code PATH}.
     *
     * @param command the program's name, such as {@code promtool}
     * @param debianPackage the Debian package that installs it, such as {@code prometheus}, named in the message
     * @return the program's path
     * @throws AssertionError if it is missing and the environment variable {@code CI} is {@code true}
     * @throws org.opentest4j.TestAbortedException if it is missing elsewhere: the test is skipped, saying why
     */
    public static Path find(String command, String debianPackage) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, command);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        String missing = command + " is not on PATH; install it with: apt-get install " + debianPackage;
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError(missing + " (.ci/run installs it when missing; under CI=true it is required)");
        }
        Assumptions.abort(missing + " (skipped because CI is not set)");
        throw new AssertionError("unreachable");
    }
}
