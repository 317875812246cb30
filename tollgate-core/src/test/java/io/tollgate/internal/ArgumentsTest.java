package io.tollgate.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** The one rule of key length, which both limiters apply at their edge. */
class ArgumentsTest {

    @Test
    void keepsAKeyOfAtMostTheLongestLengthAsItIs() {
        String longest = "k".repeat(Arguments.MAX_KEY_LENGTH);

        assertThat(Arguments.boundedKey(longest)).isSameAs(longest);
        assertThat(Arguments.boundedKey("alice")).isEqualTo("alice");
    }

    @Test
    void replacesALongerKeyByItsDigestWhichTellsKeysApart() {
        String huge = "k".repeat(8_000);

        String bounded = Arguments.boundedKey(huge);

        assertThat(bounded).startsWith("sha256:").hasSize(50);
        assertThat(Arguments.boundedKey(huge)).isEqualTo(bounded);
        assertThat(Arguments.boundedKey(huge + "!")).isNotEqualTo(bounded);
        assertThat(Arguments.boundedKey(bounded))
                .as("bounding twice changes nothing")
                .isEqualTo(bounded);
    }

    @Test
    void tellsApartLongKeysThatDifferOnlyInLoneSurrogates() {
        String padding = "k".repeat(Arguments.MAX_KEY_LENGTH);

        // UTF-8 writes each lone surrogate as '?', so a digest of the UTF-8 form would give these one bucket
        String high = Arguments.boundedKey(padding + "\uD800");
        String low = Arguments.boundedKey(padding + "\uDC00");
        String question = Arguments.boundedKey(padding + "?");

        assertThat(high).startsWith("sha256:").hasSize(50);
        assertThat(Set.of(high, low, question)).hasSize(3);
    }

    @Test
    void findsLoneSurrogatesButNotPairs() {
        assertThat(Arguments.hasLoneSurrogate("emoji\uD83D\uDD11")).isFalse();
        assertThat(Arguments.hasLoneSurrogate("\uD800")).isTrue();
        assertThat(Arguments.hasLoneSurrogate("\uDC00x")).isTrue();
        assertThat(Arguments.hasLoneSurrogate("x\uD83D")).isTrue();
    }
}
