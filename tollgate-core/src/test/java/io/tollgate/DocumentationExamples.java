package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Keeps documentation honest: every Java example on a page shows its imports, and its code appears,
 * whitespace aside, in a test source file that runs it, which compiles with those imports. Shared with the
 * other modules through this module's test jar.
 */
public final class DocumentationExamples {

    /** The project's root, seen from a module's directory, where Maven runs its tests. */
    public static final Path PROJECT = Path.of("..");

    private static final Pattern JAVA_BLOCK = block("java");
    private static final Pattern RUN_BY = Pattern.compile("<!-- run by (\\S+) -->\\s*\\z");

    private DocumentationExamples() {}

    /**
     * Asserts that every {@code ```java} block of each page (relative to the project root) begins with the
     * imports of the types it names and that its code, after them, is contained in {@code testSource}
     * (relative to the project root), whose own imports hold the block's; returns how many blocks were
     * checked. A type the block names is one that the test source imports, or a public type of the test
     * source's own package, which a reader's code must import as well. A block right after a line {@code
     * <!-- run by PATH -->} is checked against PATH instead, for a page whose examples come from more than
     * one application.
     */
    public static int assertRunBy(String testSource, String... pages) {
        int examples = 0;
        for (String page : pages) {
            String text = read(PROJECT.resolve(page));
            Matcher block = JAVA_BLOCK.matcher(text);
            while (block.find()) {
                examples++;
                Matcher marker = RUN_BY.matcher(text.substring(0, block.start()));
                assertExample(marker.find() ? marker.group(1) : testSource, page, block.group(1));
            }
        }
        return examples;
    }

    private static void assertExample(String testSource, String page, String example) {
        String text = read(PROJECT.resolve(testSource));
        String source = withoutWhitespace(text);
        Map<String, String> importable = importable(text);
        List<String> imports = new ArrayList<>();
        StringBuilder code = new StringBuilder();
        for (String line : example.split("\n")) {
            if (line.startsWith("import ") && code.toString().isBlank()) {
                imports.add(line.strip());
            } else {
                code.append(line).append('\n');
            }
        }
        assertThat(source)
                .as("example in %s is not run by %s:%n%s", page, testSource, code)
                .contains(withoutWhitespace(code.toString()));
        for (String imported : imports) {
            assertThat(importable)
                    .as("%s in an example of %s: %s does not import it", imported, page, testSource)
                    .containsValue(imported.substring("import ".length(), imported.length() - 1));
        }
        Matcher type = Pattern.compile("\\b[A-Z][A-Za-z0-9]*\\b").matcher(withoutComments(code.toString()));
        while (type.find()) {
            String name = importable.get(type.group());
            if (name != null) {
                assertThat(imports)
                        .as("an example of %s names %s but does not import it:%n%s", page, type.group(), code)
                        .contains("import " + name + ";");
            }
        }
    }

    /**
     * The types a reader's code needs imports for, by simple name: those the test source imports, and the
     * public types of its package in every module's sources (the main ones, and the test fixtures that docs
     * tell readers to take from a test jar).
     */
    private static Map<String, String> importable(String testSource) {
        Map<String, String> types = new HashMap<>();
        Matcher imported = Pattern.compile("(?m)^import ([\\w.]+)\\.(\\w+);").matcher(testSource);
        while (imported.find()) {
            types.put(imported.group(2), imported.group(1) + "." + imported.group(2));
        }
        Matcher declared = Pattern.compile("(?m)^package ([\\w.]+);").matcher(testSource);
        if (declared.find()) {
            String pkg = declared.group(1);
            try (Stream<Path> modules = Files.list(PROJECT)) {
                for (Path dir : modules.flatMap(module -> Stream.of("src/main/java", "src/test/java")
                                .map(root -> module.resolve(root).resolve(pkg.replace('.', '/'))))
                        .toList()) {
                    if (Files.isDirectory(dir)) {
                        try (Stream<Path> files = Files.list(dir)) {
                            files.map(file -> file.getFileName().toString())
                                    .filter(name -> name.endsWith(".java") && !name.equals("package-info.java"))
                                    .map(name -> name.substring(0, name.length() - ".java".length()))
                                    .filter(name -> Pattern.compile(
                                                    "(?m)^public\\s+[\\w\\s]*(class|@?interface|record|enum)\\s+" + name
                                                            + "\\b")
                                            .matcher(read(dir.resolve(name + ".java")))
                                            .find())
                                    .forEach(name -> types.putIfAbsent(name, pkg + "." + name));
                        }
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return types;
    }

    /** The code without its comments and string literals, whose words are no types. */
    private static String withoutComments(String code) {
        return code.replaceAll("(?s)/\\*.*?\\*/", "")
                .replaceAll("//[^\\n]*", "")
                .replaceAll("\"(\\\\.|[^\"\\\\\\n])*\"", "\"\"");
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
