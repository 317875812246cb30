package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The segment matcher against a regular expression written straight from the documented meaning of
 * {@code *} and {@code **}: every pattern and path of up to three segments from small alphabets, then
 * longer random ones, where a regex is fast enough to be the reference.
 */
class PathPatternPropertyTest {

    private static final List<String> PATTERN_SEGMENTS = List.of("a", "b", "*", "**", "a*", "*b", "*a*", "", "ab");
    private static final List<String> PATH_SEGMENTS = List.of("a", "b", "ab", "ba", "aab", "");

    @Test
    void matchesExactlyWhatTheDocumentedRegexMatchesForEveryShortPatternAndPath() {
        List<String> patterns = all(PATTERN_SEGMENTS, 3);
        List<String> paths = all(PATH_SEGMENTS, 3);

        for (String pattern : patterns) {
            PathPattern matcher = PathPattern.of(pattern);
            Pattern reference = reference(pattern);
            for (String path : paths) {
                assertThat(matcher.matches(path))
                        .as("%s against %s", pattern, path)
                        .isEqualTo(reference.matcher(path).matches());
            }
        }
    }

    @Test
    void matchesExactlyWhatTheDocumentedRegexMatchesForLongerRandomOnes() {
        Random random = new Random(20261202);
        for (int i = 0; i < 20_000; i++) {
            String pattern = join(random(random, PATTERN_SEGMENTS, 6));
            String path = join(random(random, PATH_SEGMENTS, 8));

            assertThat(PathPattern.of(pattern).matches(path))
                    .as("%s against %s", pattern, path)
                    .isEqualTo(reference(pattern).matcher(path).matches());
        }
    }

    /** Every path of 1 to {@code most} segments drawn from {@code segments}. */
    private static List<String> all(List<String> segments, int most) {
        List<String> all = new ArrayList<>();
        List<List<String>> level = List.of(List.of());
        for (int length = 1; length <= most; length++) {
            List<List<String>> next = new ArrayList<>();
            for (List<String> prefix : level) {
                for (String segment : segments) {
                    List<String> longer = new ArrayList<>(prefix);
                    longer.add(segment);
                    next.add(longer);
                    all.add(join(longer));
                }
            }
            level = next;
        }
        return all;
    }

    private static List<String> random(Random random, List<String> segments, int most) {
        List<String> picked = new ArrayList<>();
        for (int i = 1 + random.nextInt(most); i > 0; i--) {
            picked.add(segments.get(random.nextInt(segments.size())));
        }
        return picked;
    }

    private static String join(List<String> segments) {
        return "/" + String.join("/", segments);
    }

    /** {@code **} is any number of whole segments (a trailing one: anything at all), {@code *} is [^/]*. */
    private static Pattern reference(String pattern) {
        StringBuilder regex = new StringBuilder();
        String[] segments = pattern.substring(1).split("/", -1);
        for (int i = 0; i < segments.length; i++) {
            if (segments[i].equals("**")) {
                regex.append(i == segments.length - 1 ? "(?:/.*)?" : "(?:/[^/]*)*");
            } else {
                regex.append('/');
                for (char c : segments[i].toCharArray()) {
                    regex.append(c == '*' ? "[^/]*" : Pattern.quote(String.valueOf(c)));
                }
            }
        }
        return Pattern.compile(regex.toString());
    }
}
