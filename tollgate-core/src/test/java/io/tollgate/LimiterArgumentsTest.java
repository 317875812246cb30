package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** The one rule of key length, which both limiters apply at their edge. */
class ArgumentsTest {

    @Test
    void keepsAKeyOfAtMostTheLongestLengthAsItIs() {
        String longest = "k".repeat(LimiterArguments.MAX_KEY_LENGTH);

        assertThat(LimiterArguments.boundedKey(longest)).isSameAs(longest);
        assertThat(LimiterArguments.boundedKey("alice")).isEqualTo("alice");
    }

    @Test
    void replacesALongerKeyByItsDigestWhichTellsKeysApart() {
        String huge = "k".repeat(8_000);

        String bounded = LimiterArguments.boundedKey(huge);

        assertThat(bounded).startsWith("sha256:").hasSize(50);
        assertThat(LimiterArguments.boundedKey(huge)).isEqualTo(bounded);
        assertThat(LimiterArguments.boundedKey(huge + "!")).isNotEqualTo(bounded);
        assertThat(LimiterArguments.boundedKey(bounded))
                .as("bounding twice changes nothing")
                .isEqualTo(bounded);
    }

    @Test
    void tellsApartLongKeysThatDifferOnlyInLoneSurrogates() {
        String padding = "k".repeat(LimiterArguments.MAX_KEY_LENGTH);

        // UTF-8 writes each lone surrogate as '?', so a digest of the UTF-8 form would give these one bucket
        String high = LimiterArguments.boundedKey(padding + "\uD800");
        String low = LimiterArguments.boundedKey(padding + "\uDC00");
        String question = LimiterArguments.boundedKey(padding + "?");

        assertThat(high).startsWith("sha256:").hasSize(50);
        assertThat(Set.of(high, low, question)).hasSize(3);
    }

    @Test
    void findsLoneSurrogatesButNotPairs() {
        assertThat(LimiterArguments.hasLoneSurrogate("emoji\uD83D\uDD11")).isFalse();
        assertThat(LimiterArguments.hasLoneSurrogate("\uD800")).isTrue();
        assertThat(LimiterArguments.hasLoneSurrogate("\uDC00x")).isTrue();
        assertThat(LimiterArguments.hasLoneSurrogate("x\uD83D")).isTrue();
    }
}
