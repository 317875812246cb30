package io.tollgate.newcomer;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every page that shows how to depend on Tollgate shows the same coordinates, the ones the build publishes. */
class DocumentedCoordinatesTest {

    private static final Pattern XML_COORDINATES = Pattern.compile(
            "<groupId>io\\.tollgate</groupId>\\s*<artifactId>([^<]+)</artifactId>(?:\\s*<version>([^<]+)</version>)?");
    private static final Pattern TEXT_COORDINATES = Pattern.compile("io\\.tollgate:([\\w<>-]+)(?::([\\w.-]+))?");

    @Test
    void theBomManagesEveryPublishedModule() {
        String bom = PublishedModules.read(Path.of("tollgate-bom/pom.xml"));
        List<String> managed = new ArrayList<>();
        Matcher coordinates = XML_COORDINATES.matcher(
                bom.substring(bom.indexOf("<dependencyManagement>"), bom.indexOf("</dependencyManagement>")));
        while (coordinates.find()) {
            managed.add(coordinates.group(1));
        }

        assertThat(managed).containsExactlyInAnyOrderElementsOf(PublishedModules.jars());
        assertThat(PublishedModules.jars())
                .contains("tollgate-core", "tollgate-redis", "tollgate-spring-boot-starter", "tollgate-server");
    }

    @Test
    void everyCoordinateInTheDocsIsPublishedAtTheBuildsVersion() throws IOException {
        List<String> modules = new ArrayList<>(PublishedModules.jars());
        modules.add("tollgate-bom");
        modules.add("<module>");
        String version = PublishedModules.version();

        int shown = 0;
        for (Path page : pages()) {
            String text = Files.readString(page);
            for (Pattern pattern : List.of(XML_COORDINATES, TEXT_COORDINATES)) {
                Matcher coordinates = pattern.matcher(text);
                while (coordinates.find()) {
                    shown++;
                    assertThat(coordinates.group(1))
                            .as("%s in %s", coordinates.group(), page)
                            .isIn(modules);
                    if (coordinates.group(2) != null) {
                        assertThat(coordinates.group(2))
                                .as("the version of %s in %s", coordinates.group(), page)
                                .isEqualTo(version);
                    }
                }
            }
        }

        assertThat(shown).isGreaterThanOrEqualTo(8);
    }

    @Test
    void theReadmeSaysHowToGetTheArtifacts() {
        String readme = PublishedModules.read(Path.of("README.md"));

        assertThat(readme)
                .contains("./mvnw -B -q install -DskipTests")
                .contains("`io.tollgate:<module>:" + PublishedModules.version() + "`");
        assertThat(DocumentationExamples.blocks("README.md", "xml"))
                .anyMatch(block -> block.contains("<artifactId>tollgate-bom</artifactId>")
                        && block.contains("<scope>import</scope>"));
    }

    private static List<Path> pages() throws IOException {
        try (Stream<Path> docs = Files.list(DocumentationExamples.PROJECT.resolve("docs"))) {
            List<Path> pages = new ArrayList<>(
                    docs.filter(page -> page.toString().endsWith(".md")).toList());
            pages.add(DocumentationExamples.PROJECT.resolve("README.md"));
            pages.add(DocumentationExamples.PROJECT.resolve("CHANGELOG.md"));
            return pages;
        }
    }
}
