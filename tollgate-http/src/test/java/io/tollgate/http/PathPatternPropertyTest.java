package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The segment matcher against a regular expression written straight from the documented meaning of
 * {@code *} and {@code **}, on random short patterns and paths, where a regex is fast enough.
 */
class PathPatternPropertyTest {

    @Property(tries = 3_000)
    void matchesExactlyWhatTheDocumentedRegexMatches(@ForAll("patterns") String pattern, @ForAll("paths") String path) {
        assertThat(PathPattern.of(pattern).matches(path))
                .as("%s against %s", pattern, path)
                .isEqualTo(reference(pattern).matcher(path).matches());
    }

    @Provide
    Arbitrary<String> patterns() {
        return Arbitraries.of("a", "b", "*", "**", "a*", "*b", "*a*", "", "ab")
                .list()
                .ofMinSize(1)
                .ofMaxSize(5)
                .map(PathPatternPropertyTest::join);
    }

    @Provide
    Arbitrary<String> paths() {
        return Arbitraries.of("a", "b", "ab", "ba", "aab", "")
                .list()
                .ofMinSize(1)
                .ofMaxSize(6)
                .map(PathPatternPropertyTest::join);
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
