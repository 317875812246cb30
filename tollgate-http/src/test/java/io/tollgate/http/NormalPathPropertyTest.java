package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.PathReference;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The normal form against {@link PathReference} (the documented rules over {@code java.net.URI}), for paths made of
 * the pieces hostile clients use: every path is either refused by both or read the same by both, and the path
 * forwarded, read again by the reference, is the path the rules matched.
 */
class NormalPathPropertyTest {

    @Test
    void refusesWhatTheReferenceRefusesAndReadsTheRestAsTheReferenceDoes() {
        Random random = new Random(20261207);
        int refused = 0;
        for (int i = 0; i < 50_000; i++) {
            String raw = path(random);
            PathReference.Read expected = PathReference.read(raw);

            if (expected == null) {
                refused++;
                assertThatThrownBy(() -> NormalPath.parse(raw, PathSettings.DEFAULT))
                        .as(raw)
                        .isInstanceOf(IllegalArgumentException.class);
                continue;
            }
            NormalPath path = NormalPath.parse(raw, PathSettings.DEFAULT);
            assertThat(path.encoded()).as("forwarded form of %s", raw).isEqualTo(expected.forwarded());
            assertThat(path.decoded()).as("matched form of %s", raw).isEqualTo(expected.matched());
        }
        assertThat(refused).as("paths refused").isBetween(5_000, 45_000);
    }

    @Test
    void thePathForwardedIsReadAgainAsThePathTheRulesMatched() {
        Random random = new Random(7);
        int read = 0;
        for (int i = 0; i < 50_000; i++) {
            String raw = path(random);
            NormalPath path;
            try {
                path = NormalPath.parse(raw, PathSettings.DEFAULT);
            } catch (IllegalArgumentException refused) {
                continue;
            }
            read++;
            PathReference.Read again = PathReference.read(path.encoded());

            assertThat(again).as("the forwarded form of %s", raw).isNotNull();
            assertThat(again.forwarded()).as("the forwarded form of %s", raw).isEqualTo(path.encoded());
            assertThat(again.matched()).as("the forwarded form of %s", raw).isEqualTo(path.decoded());
            assertThat(NormalPath.parse(path.encoded(), PathSettings.DEFAULT)).isEqualTo(path);
        }
        assertThat(read).isGreaterThan(5_000);
    }

    private static String path(Random random) {
        StringBuilder path = new StringBuilder("/");
        int pieces = 1 + random.nextInt(10);
        for (int i = 0; i < pieces; i++) {
            path.append(PathReference.PIECES.get(random.nextInt(PathReference.PIECES.size())));
        }
        return path.toString();
    }
}
