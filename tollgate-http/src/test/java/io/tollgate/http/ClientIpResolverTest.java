package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.http.ClientIpResolver.ForwardingHeader;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClientIpResolverTest {

    private final ClientIpResolver behindProxies = ClientIpResolver.builder()
            .trustedProxies(List.of("10.0.0.0/8", "fd00::/8"))
            .build();

    @Test
    void byDefaultTheClientIsThePeerAndHeadersAreIgnored() {
        TestRequest forged = TestRequest.get("/").from("203.0.113.7").header("X-Forwarded-For", "1.2.3.4");

        assertThat(ClientIpResolver.peerOnly().clientIp(forged)).isEqualTo("203.0.113.7");
    }

    @Test
    void aForgedHeaderFromAnUntrustedPeerIsIgnored() {
        TestRequest forged = TestRequest.get("/").from("203.0.113.7").header("X-Forwarded-For", "1.2.3.4");

        assertThat(behindProxies.clientIp(forged)).isEqualTo("203.0.113.7");
    }

    @Test
    void behindATrustedProxyTheClientIsTheAddressTheProxyAdded() {
        TestRequest request = TestRequest.get("/").from("10.0.0.5").header("X-Forwarded-For", "198.51.100.9");

        assertThat(behindProxies.clientIp(request)).isEqualTo("198.51.100.9");
    }

    @Test
    void aClientCannotChooseItsKeyByPrependingToTheHeader() {
        // the client sent "X-Forwarded-For: 1.2.3.4"; the trusted proxy appended the real peer
        TestRequest request = TestRequest.get("/").from("10.0.0.5").header("X-Forwarded-For", "1.2.3.4, 198.51.100.9");

        assertThat(behindProxies.clientIp(request)).isEqualTo("198.51.100.9");
    }

    @Test
    void skipsAChainOfTrustedProxiesAcrossSeveralHeaderLines() {
        TestRequest request = TestRequest.get("/")
                .from("10.0.0.5")
                .header("X-Forwarded-For", "1.2.3.4, 198.51.100.9")
                .header("X-Forwarded-For", "10.1.1.1, 10.2.2.2");

        assertThat(behindProxies.clientIp(request)).isEqualTo("198.51.100.9");
    }

    @Test
    void whenEveryHopIsATrustedProxyTheLeftMostIsTheClient() {
        TestRequest request = TestRequest.get("/").from("10.0.0.5").header("X-Forwarded-For", "10.3.3.3, 10.2.2.2");

        assertThat(behindProxies.clientIp(request)).isEqualTo("10.3.3.3");
    }

    @Test
    void aMalformedHopStopsTheWalkAtTheProxyThatReportedIt() {
        TestRequest request =
                TestRequest.get("/").from("10.0.0.5").header("X-Forwarded-For", "1.2.3.4, not-an-ip, 10.9.9.9");

        assertThat(behindProxies.clientIp(request)).isEqualTo("10.9.9.9");
    }

    @Test
    void aTrustedProxyWithoutTheHeaderIsItselfTheClient() {
        assertThat(behindProxies.clientIp(TestRequest.get("/").from("10.0.0.5")))
                .isEqualTo("10.0.0.5");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "2001:DB8:0:0:0:0:0:1 | 2001:db8::1",
                "2001:db8::0001 | 2001:db8::1",
                "::ffff:198.51.100.9 | 198.51.100.9",
                "fe80::1%eth0 | fe80::1",
                "2001:db8:0:0:1:0:0:1 | 2001:db8::1:0:0:1",
                "0:0:0:0:0:0:0:0 | ::",
                "[2001:db8::1] | 2001:db8::1"
            })
    void writesIpv6AddressesCanonically(String peer, String canonical) {
        ClientIpResolver eachAddress =
                ClientIpResolver.builder().groupIpv6By64(false).build();

        assertThat(eachAddress.clientIp(TestRequest.get("/").from(peer))).isEqualTo(canonical);
    }

    @Test
    void aClientThatHopsAcrossTheAddressesOfItsSlash64IsOneClientOfAFileByDefault() {
        ClientIpResolver fromAFile =
                RequestLimiterConfig.parse("rules: []\n", "t.yaml").clientIps();

        Set<String> clients = new HashSet<>();
        for (int i = 1; i <= 12; i++) {
            clients.add(fromAFile.clientIp(TestRequest.get("/").from("2001:db8:1:2::" + Integer.toHexString(i))));
        }

        assertThat(clients).containsExactly("2001:db8:1:2::/64");
    }

    @Test
    void groupsIpv6ClientsByTheirSlash64UnlessToldNot() {
        ClientIpResolver grouping = ClientIpResolver.peerOnly();

        assertThat(grouping.clientIp(TestRequest.get("/").from("2001:db8:1:2:aaaa:bbbb:cccc:dddd")))
                .isEqualTo("2001:db8:1:2::/64");
        assertThat(grouping.clientIp(TestRequest.get("/").from("203.0.113.7"))).isEqualTo("203.0.113.7");
    }

    @Test
    void readsRfc7239ForwardedWhenConfigured() {
        ClientIpResolver forwarded = ClientIpResolver.builder()
                .trustedProxies(List.of("10.0.0.0/8"))
                .forwardingHeader(ForwardingHeader.FORWARDED)
                .build();
        TestRequest request = TestRequest.get("/")
                .from("10.0.0.5")
                .header("Forwarded", "for=1.2.3.4, for=\"[2001:db8:cafe::17]:4711\";proto=https, For=10.7.7.7");

        assertThat(forwarded.clientIp(request))
                .isEqualTo("2001:db8:cafe::/64"); // its /64, as every IPv6 client by default
    }

    @Test
    void anObfuscatedForwardedNodeStopsTheWalk() {
        ClientIpResolver forwarded = ClientIpResolver.builder()
                .trustedProxies(List.of("10.0.0.0/8"))
                .forwardingHeader(ForwardingHeader.FORWARDED)
                .build();
        TestRequest request = TestRequest.get("/").from("10.0.0.5").header("Forwarded", "for=_hidden, for=10.7.7.7");

        assertThat(forwarded.clientIp(request)).isEqualTo("10.7.7.7");
    }

    @Test
    void ignoresForwardedWhenConfiguredForXForwardedFor() {
        TestRequest request = TestRequest.get("/").from("10.0.0.5").header("Forwarded", "for=1.2.3.4");

        assertThat(behindProxies.clientIp(request)).isEqualTo("10.0.0.5");
    }

    @Test
    void saysWhichAddressesAreTrustedProxies() {
        assertThat(behindProxies.isTrustedProxy("10.1.2.3")).isTrue();
        assertThat(behindProxies.isTrustedProxy("fd00::1")).isTrue();
        assertThat(behindProxies.isTrustedProxy("203.0.113.7")).isFalse();
        assertThat(behindProxies.isTrustedProxy("proxy.internal")).isFalse();
        assertThat(ClientIpResolver.peerOnly().isTrustedProxy("10.1.2.3")).isFalse();
    }

    @Test
    void neverResolvesAHostName() {
        TestRequest request = TestRequest.get("/").from("10.0.0.5").header("X-Forwarded-For", "localhost");

        assertThat(behindProxies.clientIp(request)).isEqualTo("10.0.0.5");
    }

    @Test
    void rejectsATrustedProxyThatIsNotACidrBlock() {
        assertThatThrownBy(() -> ClientIpResolver.builder().trustedProxies(List.of("10.0.0.0/33")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("10.0.0.0/33");
        assertThatThrownBy(() -> ClientIpResolver.builder().trustedProxies(List.of("proxy.internal")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("proxy.internal");
    }
}
