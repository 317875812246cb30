package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.DocumentationExamples;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RateTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "5/s          | 5    | PT1S",
                "1000/d       | 1000 | PT24H",
                "60/m         | 60   | PT1M",
                "3/h          | 3    | PT1H",
                "2/ms         | 2    | PT0.001S",
                "1/10s        | 1    | PT10S",
                "1 per 10s    | 1    | PT10S",
                "1 per 10 seconds | 1 | PT10S",
                "100 per minute | 100 | PT1M",
                "7 PER 2 Hours | 7   | PT2H",
                "  4 / 1 day  | 4    | PT24H",
                "1 per 500us  | 1    | PT0.0005S"
            })
    void parsesEveryWrittenForm(String text, long tokens, Duration period) {
        Rate rate = Rate.parse(text);

        assertThat(rate.tokens()).isEqualTo(tokens);
        assertThat(rate.period()).isEqualTo(period);
    }

    @ParameterizedTest
    @ValueSource(strings = {"5/s", "1000/d", "1 per 10s", "3 per 1500ms", "1 per 90m", "7 per 30us", "1/us"})
    void toStringIsReadBackAsTheSameRate(String text) {
        Rate rate = Rate.parse(text);

        assertThat(rate.toString()).isEqualTo(text);
        assertThat(Rate.parse(rate.toString())).isEqualTo(rate);
    }

    @Test
    void ratesThatRefillAtTheSameSpeedAreEqual() {
        assertThat(Rate.perSecond(10)).isEqualTo(Rate.of(20, Duration.ofSeconds(2)));
        assertThat(Rate.perSecond(10)).hasSameHashCodeAs(Rate.of(600, Duration.ofMinutes(1)));
        assertThat(Rate.perSecond(10)).isNotEqualTo(Rate.perSecond(11));
    }

    @Test
    void keepsTicksInLowestTerms() {
        Rate threePerSecond = Rate.perSecond(3);
        Rate tenPerSecond = Rate.perSecond(10);

        assertThat(threePerSecond.ticksPerMicrosecond()).isEqualTo(3);
        assertThat(threePerSecond.ticksPerToken()).isEqualTo(1_000_000);
        assertThat(tenPerSecond.ticksPerMicrosecond()).isEqualTo(1);
        assertThat(tenPerSecond.ticksPerToken()).isEqualTo(100_000);
    }

    @Test
    void acceptsTheFastestAndSlowestSupportedRates() {
        assertThat(Rate.perSecond(1_000_000).ticksPerToken()).isEqualTo(1);
        assertThat(Rate.perDay(1).ticksPerToken()).isEqualTo(86_400_000_000L);
    }

    @Test
    void rejectsARateFasterThanOneTokenPerMicrosecond() {
        assertThatThrownBy(() -> Rate.perSecond(1_000_001))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1000001 per s")
                .hasMessageContaining("one token per microsecond");
    }

    @Test
    void rejectsTokensBelowOne() {
        assertThatThrownBy(() -> Rate.perSecond(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rate tokens must be at least 1, was 0");
        assertThatThrownBy(() -> Rate.perSecond(-5)).hasMessageContaining("was -5");
    }

    @Test
    void rejectsAPeriodThatIsNotPositive() {
        assertThatThrownBy(() -> Rate.of(1, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rate period must be positive, was PT0S");
        assertThatThrownBy(() -> Rate.of(1, Duration.ofSeconds(-1))).hasMessageContaining("PT-1S");
    }

    @Test
    void rejectsAPeriodWithSubMicrosecondPrecision() {
        assertThatThrownBy(() -> Rate.of(1, Duration.ofNanos(1_500)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("whole number of microseconds");
    }

    @Test
    void rejectsAPeriodTooLongToCount() {
        assertThatThrownBy(() -> Rate.of(1, Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too long");
    }

    @Test
    void rejectsANullPeriod() {
        assertThatThrownBy(() -> Rate.of(1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Rate.parse(null)).isInstanceOf(NullPointerException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "fast", "5", "5/", "/s", "-5/s", "5/s/s", "5 per", "five/s", "1.5/s", "5 every s"})
    void rejectsTextThatIsNotARate(String text) {
        assertThatThrownBy(() -> Rate.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid rate '" + text + "'");
    }

    @Test
    void namesAnUnknownUnitAndEveryUnitThatIsRead() {
        assertThatThrownBy(() -> Rate.parse("100/mn"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid rate '100/mn': unknown unit 'mn'; units are us, ms, s, m, h, d, or the words"
                        + " microsecond, millisecond, second, minute, hour, day (also plural, and micro, milli, sec,"
                        + " min)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"docs/configuration.md", "docs/concepts.md"})
    void theDocsNameTheSameUnitsAsTheErrors(String page) throws Exception {
        String text =
                Files.readString(DocumentationExamples.PROJECT.resolve(page)).replaceAll("\\s+", " ");

        assertThat(text).contains("units are " + Rate.UNITS);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "1/us", "1/micro", "1/micros", "1/microsecond", "1/microseconds", "1/ms", "1/milli", "1/millis",
                "1/millisecond", "1/milliseconds", "1/s", "1/sec", "1/second", "1/seconds", "1/m", "1/min",
                "1/minute", "1/minutes", "1/h", "1/hour", "1/hours", "1/d", "1/day", "1/days"
            })
    void readsEveryUnitTheListNames(String text) {
        assertThat(Rate.parse(text).tokens()).isEqualTo(1);
    }

    @Test
    void namesTheProblemWithAParsedRateThatIsTooFast() {
        assertThatThrownBy(() -> Rate.parse("2/us"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid rate '2/us'")
                .hasMessageContaining("one token per microsecond");
    }

    @Test
    void namesANumberTooLargeToRead() {
        assertThatThrownBy(() -> Rate.parse("99999999999999999999/s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too large");
    }
}
