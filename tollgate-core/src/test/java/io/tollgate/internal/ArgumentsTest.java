package io.tollgate.internal;

import static org.assertj.core.api.Assertions.assertThat;

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
}
