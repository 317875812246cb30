package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps documentation honest: every Java example on a page must appear, whitespace aside, in a test
 * source file that runs it. Shared with the other modules through this module's test jar.
 */
public final class DocumentationExamples {

    /** The project's root, seen from a module's directory, where Maven runs its tests. */
    public static final Path PROJECT = Path.of("..");

    private static final Pattern JAVA_BLOCK = block("java");

    private DocumentationExamples() {}

    /**
     * Asserts that every {@code ```java} block of each page (relative to the project root) is contained in
     * {@code testSource} (relative to the project root); returns how many blocks were checked.
     */
    public static int assertRunBy(String testSource, String... pages) {
        String source = withoutWhitespace(read(PROJECT.resolve(testSource)));
        int examples = 0;
        for (String page : pages) {
            Matcher block = JAVA_BLOCK.matcher(read(PROJECT.resolve(page)));
            while (block.find()) {
                examples++;
                assertThat(source)
                        .as("example in %s is not run by %s:%n%s", page, testSource, block.group(1))
                        .contains(withoutWhitespace(block.group(1)));
            }
        }
        return examples;
    }

    /**
     * Returns the text of every fenced block of {@code language} (such as {@code yaml}) on a page
     * (relative to the project root), in order, so that a test can check what the page shows.
     */
    public static List<String> blocks(String page, String language) {
        List<String> blocks = new ArrayList<>();
        Matcher block = block(language).matcher(read(PROJECT.resolve(page)));
        while (block.find()) {
            blocks.add(block.group(1));
        }
        return blocks;
    }

    private static Pattern block(String language) {
        return Pattern.compile("```" + Pattern.quote(language) + "\\n(.*?)```", Pattern.DOTALL);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String withoutWhitespace(String text) {
        return text.replaceAll("\\s+", "");
    }
}
