package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.tollgate.fixtures.LoggedLines;
import io.tollgate.fixtures.ManualTimeSource;
import java.net.ConnectException;
import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/** What the log says while Redis cannot be reached: once, then once a minute, then once when it connects. */
@Isolated // it counts what a logger shared by the JVM says
class ConnectionLogTest {

    private static final RedisConnectionException REFUSED = new RedisConnectionException(
            "Unable to connect to localhost/<unresolved>:6390",
            new ConnectException("Connection refused: localhost/127.0.0.1:6390"));

    private final ManualTimeSource time = new ManualTimeSource();
    private final ConnectionLog log = new ConnectionLog("localhost:6390", time);

    @RegisterExtension
    final LoggedLines logged = new LoggedLines(RedisRateLimiter.class);

    @Test
    void logsTheFirstFailureThenOneCountedLineAMinuteThenOneWhenItConnects() {
        for (int second = 0; second < 61; second++) {
            log.failed(REFUSED);
            time.advance(Duration.ofSeconds(1));
        }
        log.failed(REFUSED);
        log.connected();

        assertThat(logged.lines())
                .extracting(LogRecord::getLevel)
                .containsExactly(Level.WARNING, Level.WARNING, Level.INFO);
        assertThat(logged.lines())
                .extracting(this::text)
                .containsExactly(
                        "Tollgate cannot connect to Redis at localhost:6390: Connection refused:"
                                + " localhost/127.0.0.1:6390; deciding by the failure policy, and trying again every"
                                + " second",
                        "Tollgate still cannot connect to Redis at localhost:6390: 60 attempts failed in the last 60 s;"
                                + " the latest: Connection refused: localhost/127.0.0.1:6390",
                        "Tollgate connected to Redis at localhost:6390 after 62 failed attempts");
    }

    @Test
    void saysARefusedConnectionAlikeOnNiosAndOnNativeTransports() {
        RedisConnectionException onEpoll = new RedisConnectionException(
                "Unable to connect to localhost/<unresolved>:6390",
                new ConnectException("finishConnect(..) failed with error(-111): Connection refused"));
        RedisConnectionException onNio = new RedisConnectionException(
                "Unable to connect to localhost/<unresolved>:6390", new ConnectException("Connection refused"));

        assertThat(ConnectionLog.describe(onEpoll))
                .isEqualTo(ConnectionLog.describe(onNio))
                .isEqualTo("Connection refused");
    }

    @Test
    void reportsWhatRedisAnsweredRatherThanThatItCouldNotConnect() {
        RedisConnectionException wrongPassword = new RedisConnectionException(
                "Unable to connect to localhost/<unresolved>:6390",
                new RedisCommandExecutionException("WRONGPASS invalid username-password pair or user is disabled."));

        log.failed(wrongPassword);

        assertThat(log.reason())
                .isEqualTo("Redis answered WRONGPASS invalid username-password pair or user is disabled.");
        assertThat(text(logged.lines().get(0))).contains("Redis answered WRONGPASS");
    }

    @Test
    void forgetsTheReasonOnceConnected() {
        log.failed(REFUSED);

        log.connected();

        assertThat(log.reason()).isNull();
        assertThat(logged.lines())
                .extracting(this::text)
                .last()
                .isEqualTo("Tollgate connected to Redis at localhost:6390 after 1 failed attempt");
    }

    private String text(LogRecord record) {
        return new java.util.logging.SimpleFormatter().formatMessage(record);
    }
}
