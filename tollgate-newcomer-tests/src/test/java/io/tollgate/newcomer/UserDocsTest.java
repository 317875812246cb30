package io.tollgate.newcomer;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The pages a user reads (the README, the CHANGELOG and docs/) hold together and say what is true now: every link
 * reaches a file and every anchor a heading, and nothing of how the project was built (issue numbers, commit
 * hashes, test classes, the dates of measuring runs, "this machine") is left in them. Git keeps the history.
 */
class UserDocsTest {

    private static final Path ROOT = DocumentationExamples.PROJECT;

    /** The most words the README and docs/ may hold together: a newcomer reads them in an afternoon. */
    private static final int MOST_WORDS = 30_000;

    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6} (.+)$");

    /** What belongs to the project's history, not to a user's page, by what it looks like. */
    private static final Map<String, Pattern> HISTORY = Map.of(
            "an issue number",
            Pattern.compile("(?i)\\bissues? #?\\d+|(?<![\\w&/])#\\d{1,4}\\b"),
            "a commit hash",
            Pattern.compile("\\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\\b"),
            "a test class",
            Pattern.compile("\\b[A-Z][a-z][A-Za-z0-9]*(Test|IT)\\b"),
            "the date of a run",
            Pattern.compile("\\b20\\d\\d-\\d\\d-\\d\\d\\b|\\b(January|February|March|April|May|June|July|August"
                    + "|September|October|November|December) 20\\d\\d\\b"),
            "the machine it was written on",
            Pattern.compile("(?i)\\bthis (2-core |two-core )?machine\\b"));

    @Test
    void everyLinkReachesAFileAndEveryAnchorAHeading() throws IOException {
        List<String> broken = new ArrayList<>();
        int links = 0;
        List<Path> linking = new ArrayList<>(pages());
        linking.add(ROOT.resolve("ARCHITECTURE.md")); // the contributors' pages link into the users' too
        linking.add(ROOT.resolve("CONTRIBUTING.md"));
        for (Path page : linking) {
            for (String line : prose(page)) {
                Matcher link = LINK.matcher(line);
                while (link.find()) {
                    String target = link.group(1);
                    if (target.matches("^[a-z]+:.*")) {
                        continue; // https:, mailto: and the like: not this repository's
                    }
                    links++;
                    String problem = problem(page, target);
                    if (problem != null) {
                        broken.add(ROOT.relativize(page) + ": " + target + " (" + problem + ")");
                    }
                }
            }
        }

        assertThat(links).isGreaterThan(100);
        assertThat(broken).as("broken links").isEmpty();
    }

    @Test
    void noPageTellsTheProjectsHistory() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path page : pages()) {
            for (String line : prose(page)) {
                for (Map.Entry<String, Pattern> kind : HISTORY.entrySet()) {
                    Matcher match = kind.getValue().matcher(line);
                    if (match.find()) {
                        found.add(ROOT.relativize(page) + ": " + kind.getKey() + " '" + match.group() + "'");
                    }
                }
            }
        }

        assertThat(found).isEmpty();
    }

    /** Why {@code target}, linked from {@code page}, leads nowhere; null if it leads somewhere. */
    private static String problem(Path page, String target) throws IOException {
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
            return "no such file";
        }
        if (anchor == null) {
            return null;
        }
        if (!resolved.toString().endsWith(".md")) {
            return "an anchor in a file that is not a page";
        }
        return anchors(resolved).contains(anchor) ? null : "no such heading";
    }

    /** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
    static Set<String> anchors(Path page) throws IOException {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : prose(page)) {
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = heading.group(1)
                        .trim()
                        .toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N} _-]", "")
                        .replace(' ', '-');
                int times = seen.merge(slug, 1, Integer::sum);
                anchors.add(times == 1 ? slug : slug + "-" + (times - 1));
            }
        }
        return anchors;
    }

    /** The lines of a page outside its fenced code blocks. */
    private static List<String> prose(Path page) throws IOException {
        List<String> lines = new ArrayList<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(page)) {
            if (line.startsWith("```")) {
                fenced = !fenced;
            } else if (!fenced) {
                lines.add(line);
            }
        }
        return lines;
    }

    /**
     * What a user has to read stays short enough to be read: the README and docs/, examples included, hold fewer
     * than {@value #MOST_WORDS} words, counted as {@code wc -w} counts them (whatever whitespace separates).
     */
    @Test
    void theReadmeAndTheDocsStayUnderTheirWordBudget() throws IOException {
        Map<String, Integer> words = new HashMap<>();
        for (Path page : pages()) {
            if (!page.endsWith("CHANGELOG.md")) {
                String text = Files.readString(page).strip();
                words.put(ROOT.relativize(page).toString(), text.isEmpty() ? 0 : text.split("\\s+").length);
            }
        }

        int total = words.values().stream().mapToInt(Integer::intValue).sum();
        assertThat(words).containsKeys("README.md", "docs/configuration.md", "docs/server.md");
        assertThat(total)
                .as("words in the README and docs/ (per page: %s); say the same in fewer words", words)
                .isLessThan(MOST_WORDS);
    }

    /** The README, the CHANGELOG and every page under docs/. */
    static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CHANGELOG.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }
}
