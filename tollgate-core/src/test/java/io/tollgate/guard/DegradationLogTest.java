package io.tollgate.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.WarmUpKeys;
import io.tollgate.fixtures.LoggedLines;
import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What an operator reads about degraded decisions: the first at once, then one line per 10 s, counted. */
class DegradationLogTest {

    private static final String LOGGER = "io.tollgate.redis.RedisRateLimiter";

    private static final Policy POLICY = Policy.of("per-client", Limit.of(5, Rate.perSecond(1)));
    private static final Degradation TIMEOUT =
            new Degradation(Degradation.Cause.TIMEOUT, FailurePolicy.LOCAL, "Redis did not answer within 50 ms");

    private final ManualTimeSource time = new ManualTimeSource();
    private final DegradationLog log = new DegradationLog(time, System.getLogger(LOGGER), "Redis");

    @RegisterExtension
    final LoggedLines logged = new LoggedLines(LOGGER);

    @Test
    void logsTheFirstDegradedDecisionAtOnceAndThenAtMostOneCountedLinePerTenSeconds() {
        for (int i = 0; i < 5; i++) {
            log.degraded(POLICY, "k", TIMEOUT);
        }
        time.advance(Duration.ofSeconds(5));
        for (int i = 0; i < 3; i++) {
            log.degraded(POLICY, "k", TIMEOUT);
        }
        time.advance(Duration.ofSeconds(6));
        log.degraded(POLICY, "k", TIMEOUT);

        assertThat(logged.lines()).extracting(LogRecord::getLevel).containsExactly(Level.WARNING, Level.WARNING);
        assertThat(logged.lines())
                .extracting(LogRecord::getMessage)
                .containsExactly(
                        "Tollgate: policy 'per-client': 1 decision degraded (timeout), decided by the failure policy"
                                + " LOCAL; the latest: Redis did not answer within 50 ms",
                        "Tollgate: policy 'per-client': 8 decisions in the last 11 s degraded (timeout), decided by"
                                + " the failure policy LOCAL; the latest: Redis did not answer within 50 ms");
    }

    @Test
    void anOutageThatEndsWithinTheIntervalIsStillCountedWhole() {
        for (int i = 0; i < 20; i++) { // a ten-second outage: twenty fallback decisions, then Redis answers
            log.degraded(POLICY, "k", TIMEOUT);
            time.advance(Duration.ofMillis(450));
        }
        log.flush(); // the guard's every second: the interval has not passed, nothing yet
        int beforeTheInterval = logged.lines().size();
        time.advance(Duration.ofMillis(1_000));

        log.flush();
        log.flush();

        assertThat(beforeTheInterval).isEqualTo(1);
        assertThat(logged.lines())
                .extracting(LogRecord::getMessage)
                .containsExactly(
                        "Tollgate: policy 'per-client': 1 decision degraded (timeout), decided by the failure policy"
                                + " LOCAL; the latest: Redis did not answer within 50 ms",
                        "Tollgate: policy 'per-client': 19 decisions in the last 10 s degraded (timeout), decided by"
                                + " the failure policy LOCAL; the latest: Redis did not answer within 50 ms");
    }

    @Test
    void whatIsHeldBackIsLoggedWhenTheLimiterCloses() {
        log.degraded(POLICY, "k", TIMEOUT);
        log.degraded(POLICY, "k", TIMEOUT);
        time.advance(Duration.ofSeconds(2));

        log.flushAll();

        assertThat(logged.lines())
                .extracting(LogRecord::getMessage)
                .last()
                .asString()
                .startsWith("Tollgate: policy 'per-client': 1 decision in the last 2 s degraded (timeout)");
    }

    @Test
    void theWarmUpsAdmissionsOverTheLimitAreNotLogged() {
        log.overLimit(POLICY, WarmUpKeys.key(1));

        assertThat(logged.lines()).isEmpty();
    }

    @Test
    void theWarmUpsDegradedDecisionsAreNotLoggedUnderAPrefixALayerAboveGaveTheirKeysEither() {
        log.degraded(POLICY, WarmUpKeys.key(1), TIMEOUT);
        log.degraded(POLICY, "api:" + WarmUpKeys.key(2), TIMEOUT); // the server's decision API's keys

        assertThat(logged.lines()).isEmpty();
    }

    @Test
    void eachPolicyAndCauseHasItsOwnLine() {
        log.degraded(POLICY, "k", TIMEOUT);
        log.degraded(POLICY, "k", new Degradation(Degradation.Cause.CIRCUIT_OPEN, FailurePolicy.LOCAL, "open"));
        log.degraded(Policy.of("login", Limit.of(5, Rate.perSecond(1))), "k", TIMEOUT);

        assertThat(logged.lines()).hasSize(3);
    }

    @Test
    void countsAdmissionsThatTheLateAnswerShowedOverTheLimit() {
        log.overLimit(POLICY, "alice");
        log.overLimit(POLICY, "bob");
        time.advance(Duration.ofSeconds(10));
        log.overLimit(POLICY, "carol");

        assertThat(logged.lines())
                .extracting(LogRecord::getMessage)
                .containsExactly(
                        "Tollgate: policy 'per-client': 1 request admitted by the failure policy while Redis was late,"
                                + " and over the limit by its late answer; charged to Redis (the latest for key"
                                + " 'alice')",
                        "Tollgate: policy 'per-client': 2 requests in the last 10 s admitted by the failure policy"
                                + " while Redis was late, and over the limit by its late answer; charged to Redis (the"
                                + " latest for key 'carol')");
    }

    @Test
    void aWarmUpIsColdByDesignAndNotLoggedWhateverItsPolicy() {
        log.degraded(POLICY, WarmUpKeys.key(1), TIMEOUT);

        assertThat(logged.lines()).isEmpty();
    }
}
