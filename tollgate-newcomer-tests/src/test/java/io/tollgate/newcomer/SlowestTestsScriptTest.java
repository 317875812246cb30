package io.tollgate.newcomer;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CONTRIBUTING.md's script lists the slowest test classes from the Surefire and Failsafe reports of a build. */
class SlowestTestsScriptTest {

    @TempDir
    Path build;

    @Test
    void listsTheSlowestTestClassesOfEveryModuleAndTheTimePerModule() throws Exception {
        report("tollgate-core/target/surefire-reports", "io.tollgate.FastTest", "0.250", 3);
        report("tollgate-redis/target/failsafe-reports", "io.tollgate.redis.SlowIT", "1,234.5", 2);
        report("tollgate-redis/target/surefire-reports", "io.tollgate.redis.MiddleTest", "12.0", 40);

        List<String> lines = run("2");

        assertThat(lines)
                .containsSubsequence(
                        "The 2 slowest test classes of 3:",
                        "  1234.5 s  tollgate-redis                 integration io.tollgate.redis.SlowIT (2 tests)",
                        "    12.0 s  tollgate-redis                 unit        io.tollgate.redis.MiddleTest (40 tests)",
                        "Time in tests per module (the classes' times added; the build's own time is more):",
                        "     0.3 s  tollgate-core",
                        "  1246.5 s  tollgate-redis")
                .noneMatch(line -> line.contains("FastTest"));
    }

    @Test
    void withoutReportsItSaysToRunTheTestsFirst() throws Exception {
        assertThat(String.join("\n", run())).contains("No test reports").contains("./mvnw -B verify");
    }

    private void report(String dir, String suite, String seconds, int tests) throws IOException {
        Path reports = Files.createDirectories(build.resolve(dir));
        Files.writeString(
                reports.resolve("TEST-" + suite + ".xml"),
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite xmlns:xsi=\"x\" version=\"3.0.2\" name=\""
                        + suite + "\" time=\"" + seconds + "\" tests=\"" + tests
                        + "\" errors=\"0\" skipped=\"0\" failures=\"0\">\n</testsuite>\n");
    }

    private List<String> run(String... args) throws Exception {
        Path script =
                DocumentationExamples.PROJECT.resolve(".ci/SlowestTests.java").toAbsolutePath();
        List<String> command = new java.util.ArrayList<>(
                List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), script.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command)
                .directory(build.toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return output.lines().toList();
    }
}
