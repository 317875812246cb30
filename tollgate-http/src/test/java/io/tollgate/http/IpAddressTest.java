package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Reading IP address literals: what is one, how it is written back, and what is refused without a lookup. */
class IpAddressTest {

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource({
        "203.0.113.7, 203.0.113.7",
        "0.0.0.0, 0.0.0.0",
        "255.255.255.255, 255.255.255.255",
        "' 10.1.2.3 ', 10.1.2.3",
        "[192.0.2.1], 192.0.2.1",
        "::ffff:192.0.2.1, 192.0.2.1",
        "2001:DB8::1, 2001:db8::1",
        "[2001:db8::1], 2001:db8::1",
        "fe80::1%eth0, fe80::1"
    })
    void readsALiteralAndWritesItCanonically(String literal, String canonical) {
        assertThat(IpAddress.parse(literal)).hasToString(canonical);
    }

    @ParameterizedTest(name = "[{0}]")
    @ValueSource(
            strings = {
                "256.1.1.1",
                "1.2.3",
                "1.2.3.4.5",
                "1.2.3.",
                ".1.2.3",
                "1..2.3",
                "010.1.1.1",
                "1.2.3.04",
                "1234.1.1.1",
                "1.2.3.4a",
                "a.b.c.d",
                "١.٢.٣.٤",
                "localhost",
                "example.com",
                "",
                "1.2.3.-4",
                "+1.2.3.4"
            })
    void refusesWhatIsNotADottedQuadOrIpv6Literal(String text) {
        assertThat(IpAddress.parse(text)).isNull();
    }
}
