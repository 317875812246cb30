package io.tollgate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;

class RedisServerTest {

    @Test
    void startsAServerThatAnswersOnItsPort() {
        try (RedisServer server = RedisServer.start()) {
            assertThat(server.command("PING")).isEqualTo("PONG");
            assertThat(server.uri()).isEqualTo("redis://127.0.0.1:" + server.port());
        }
    }

    @Test
    void passesExtraArguments() {
        try (RedisServer server = RedisServer.start("--maxmemory", "12345678")) {
            assertThat(server.command("CONFIG", "GET", "maxmemory")).isEqualTo(List.of("maxmemory", "12345678"));
        }
    }

    @Test
    void restartsEmptyOnTheSamePortAfterAKill() {
        try (RedisServer server = RedisServer.start()) {
            server.command("SET", "k", "v");

            server.kill();
            boolean runningAfterKill = server.isRunning();
            server.restart();

            assertThat(runningAfterKill).isFalse();
            assertThat(server.command("GET", "k")).isNull();
        }
    }

    @Test
    void aPausedServerAnswersNothingUntilResumed() {
        try (RedisServer server = RedisServer.start()) {
            server.pause();

            assertThatThrownBy(() -> server.command("PING")).isInstanceOf(UncheckedIOException.class);
            server.resume();
            assertThat(server.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void reportsErrorRepliesAsExceptions() {
        try (RedisServer server = RedisServer.start()) {
            assertThatThrownBy(() -> server.command("NO-SUCH-COMMAND"))
                    .isInstanceOf(RedisErrorReply.class)
                    .hasMessageContaining("unknown command");
        }
    }

    @Test
    void countsCallsOfACommand() {
        try (RedisServer server = RedisServer.start()) {
            server.command("SET", "a", "1");
            server.command("SET", "b", "2");

            assertThat(server.commandCalls("set")).isEqualTo(2);
            assertThat(server.commandCalls("evalsha")).isZero();
        }
    }

    @Test
    void runsTheRedis62BinaryShippedInEmbeddedRedis() {
        try (RedisServer server = RedisServer.startEmbedded()) {
            assertThat(server.info("redis_version")).startsWith("6.2.");
            assertThat(server.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void acceptsTlsConnectionsOnItsTlsPort() throws Exception {
        try (RedisServer server = RedisServer.startWithTls()) {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, new TrustManager[] {new TrustEverything()}, null);
            try (SSLSocket socket =
                    (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", server.tlsPort())) {
                socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                byte[] reply = socket.getInputStream().readNBytes(7);

                assertThat(new String(reply, StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
            }
            assertThat(server.tlsCertificate()).exists();
        }
    }

    /** Trusts the test server's self-signed certificate, and anything else: for this test only. */
    private static final class TrustEverything implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }

    @Test
    void startsASentinelThatKnowsItsMaster() {
        try (RedisServer master = RedisServer.start();
                RedisServer sentinel = RedisServer.startSentinel(master, "mymaster")) {
            Object address = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster");

            assertThat(address).isEqualTo(List.of("127.0.0.1", Integer.toString(master.port())));
            assertThat(sentinel.sentinelUri("mymaster"))
                    .isEqualTo("redis-sentinel://127.0.0.1:" + sentinel.port() + "#mymaster");
        }
    }
}
