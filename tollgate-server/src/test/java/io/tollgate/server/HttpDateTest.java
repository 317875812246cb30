package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The Date header field, as RFC 9110's IMF-fixdate writes it. */
class HttpDateTest {

    @Test
    void writesTheDayOfTheMonthWithTwoDigits() {
        long sixthOfDecember = Instant.parse("2026-12-06T04:05:09Z").toEpochMilli();

        assertThat(HttpDate.of(sixthOfDecember)).isEqualTo("Sun, 06 Dec 2026 04:05:09 GMT");
    }

    @Test
    void writesTheTwentiethAsIs() {
        assertThat(HttpDate.of(Instant.parse("2027-01-20T23:59:59.999Z").toEpochMilli()))
                .isEqualTo("Wed, 20 Jan 2027 23:59:59 GMT");
    }
}
