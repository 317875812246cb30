package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The meters the pages list are meters the code registers: a row of docs/server.md's meters table (Prometheus
 * names) or of docs/resilience.md's (Micrometer names), or a meter docs/http.md names, that no main source names
 * fails here. The other way round, a meter the server publishes without a row, is {@link
 * ServerDocumentationTest}'s.
 */
class MetersReferenceTest {

    /** A meter's name as the code gives it to Micrometer: {@code "tollgate.http.decisions"}. */
    private static final Pattern REGISTERED = Pattern.compile("\"(tollgate\\.[a-z_.]+)\"");

    @Test
    void everyMeterOfTheServersTableIsRegisteredByTheCode() throws IOException {
        Set<String> registered = registered();
        Set<String> documented =
                names(table("docs/server.md", "| meter (Prometheus name) |"), Pattern.compile("`(tollgate_[a-z_]+)`"));

        assertThat(documented).hasSizeGreaterThan(20);
        for (String name : documented) {
            assertThat(registered)
                    .as("%s of docs/server.md's meters, as the code names it", name)
                    .contains(withoutSuffix(name));
        }
    }

    @Test
    void everyMeterOfTheResiliencePagesTableIsRegisteredByTheCode() throws IOException {
        Set<String> registered = registered();
        Set<String> documented = names(
                table("docs/resilience.md", "| name | type | tags | what |"),
                Pattern.compile("^\\| `(tollgate\\.[a-z_.]+)`", Pattern.MULTILINE));

        assertThat(documented).hasSizeGreaterThan(5);
        for (String name : documented) {
            assertThat(registered).as("%s of docs/resilience.md's meters", name).contains(name.replace('.', '_'));
        }
    }

    @Test
    void everyMeterTheHttpPageNamesIsRegisteredByTheCode() throws IOException {
        Set<String> registered = registered();
        Set<String> documented = names(
                Files.readString(DocumentationExamples.PROJECT.resolve("docs/http.md")),
                Pattern.compile("`(tollgate\\.http\\.[a-z_]+)`"));

        assertThat(documented).hasSizeGreaterThanOrEqualTo(5);
        for (String name : documented) {
            assertThat(registered).as("%s of docs/http.md", name).contains(name.replace('.', '_'));
        }
    }

    /** The Prometheus family of a sample name: the name without the suffixes Micrometer's registry adds. */
    private static String withoutSuffix(String name) {
        return name.replaceAll("(_seconds_max|_seconds|_total|_max|_bucket)$", "");
    }

    /** Every meter name in the main sources, dots written as Prometheus writes them. */
    private static Set<String> registered() throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(DocumentationExamples.PROJECT)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                String path = file.toString();
                if (path.endsWith(".java") && path.contains("src/main/java") && !path.contains("/target/")) {
                    Matcher name = REGISTERED.matcher(Files.readString(file));
                    while (name.find()) {
                        names.add(name.group(1).replace('.', '_'));
                    }
                }
            }
        }
        return names;
    }

    /** The lines of the table under {@code header} on {@code page}. */
    private static String table(String page, String header) throws IOException {
        String text = Files.readString(DocumentationExamples.PROJECT.resolve(page));
        int start = text.indexOf(header);
        assertThat(start).as("the table %s on %s", header, page).isNotNegative();
        int end = text.indexOf("\n\n", start);
        return text.substring(start, end < 0 ? text.length() : end);
    }

    private static Set<String> names(String table, Pattern name) {
        Set<String> names = new TreeSet<>();
        Matcher matcher = name.matcher(table);
        while (matcher.find()) {
            names.add(matcher.group(1));
        }
        return names;
    }
}
