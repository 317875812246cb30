package io.tollgate.newcomer;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every page with a Java example is one that a test hands to {@link DocumentationExamples#assertRunBy}, which
 * checks that each example shows its imports and is run: a new page cannot slip past that check.
 */
class EveryJavaExampleIsCheckedTest {

    @Test
    void everyPageWithJavaExamplesIsCheckedByATest() throws IOException {
        List<String> checkers = new ArrayList<>();
        try (Stream<Path> sources = Files.walk(DocumentationExamples.PROJECT)) {
            for (Path source : (Iterable<Path>) sources::iterator) {
                if (source.toString().endsWith(".java")
                        && source.toString().contains("src/test/java")
                        && !source.toString().contains("/target/")) {
                    String text = Files.readString(source);
                    if (text.contains("DocumentationExamples.assertRunBy(")) {
                        checkers.add(text);
                    }
                }
            }
        }

        List<String> pages = pagesWithJavaExamples();
        assertThat(pages).contains("README.md", "docs/concepts.md", "docs/http.md", "docs/redis.md");
        for (String page : pages) {
            assertThat(checkers)
                    .as("a test that runs the Java examples of %s", page)
                    .anyMatch(checker -> checker.contains("\"" + page + "\""));
        }
    }

    private static List<String> pagesWithJavaExamples() throws IOException {
        List<String> pages = new ArrayList<>();
        if (!DocumentationExamples.blocks("README.md", "java").isEmpty()) {
            pages.add("README.md");
        }
        try (Stream<Path> docs = Files.list(DocumentationExamples.PROJECT.resolve("docs"))) {
            for (Path page : docs.sorted().toList()) {
                String name = "docs/" + page.getFileName();
                if (name.endsWith(".md")
                        && !DocumentationExamples.blocks(name, "java").isEmpty()) {
                    pages.add(name);
                }
            }
        }
        return pages;
    }
}
