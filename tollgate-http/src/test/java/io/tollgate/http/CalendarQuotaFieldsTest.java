package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.CalendarQuota;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

/** A policy's calendar quota in the rate-limit header fields, and in a rules file. */
class CalendarQuotaFieldsTest {

    // 3 December 2026, 22:00 in Paris: two hours before the day's count starts again
    private final ManualTimeSource time = new ManualTimeSource(1_796_331_600_000_000L);
    private final InMemoryRateLimiter limiter =
            InMemoryRateLimiter.builder().timeSource(time).build();

    @Test
    void aQuotaIsOneMoreLimitOfThePolicyReportedUntilItsPeriodEnds() {
        Policy daily = Policy.of("api", Limit.of(10, Rate.perSecond(10)))
                .withQuota(CalendarQuota.of(2, CalendarQuota.Period.DAY, ZoneId.of("Europe/Paris")));
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(daily).build())
                .build();

        RequestDecision first = decide(requests);
        decide(requests);
        RequestDecision third = decide(requests);

        assertThat(first.headers())
                .containsEntry("RateLimit-Policy", "\"api.0\";q=10;w=1, \"api.1\";q=2;w=86400")
                .containsEntry("RateLimit", "\"api.1\";r=1;t=7200");
        assertThat(third.status()).isEqualTo(429);
        assertThat(third.headers())
                .containsEntry("Retry-After", "7200")
                .containsEntry("RateLimit", "\"api.1\";r=0;t=7200");
    }

    @Test
    void quotasAreReadFromAFileWithUtcByDefault() {
        RequestLimiterConfig config = RequestLimiterConfig.parse("""
                policies:
                  partner:
                    limits: [{capacity: 20, refill: 10/s}]
                    quotas:
                      - {count: 10000, period: month, zone: Europe/Paris}
                      - {count: 500, period: hour}
                rules: [{policy: partner}]
                """, "t.yaml");

        assertThat(config.policies().get(0).quotas())
                .containsExactly(
                        CalendarQuota.of(10_000, CalendarQuota.Period.MONTH, ZoneId.of("Europe/Paris")),
                        CalendarQuota.of(500, CalendarQuota.Period.HOUR, ZoneId.of("UTC")));
        assertThat(RequestLimiterConfig.parse(
                                "policies.partner.limits[0].capacity=20\n"
                                        + "policies.partner.limits[0].refill=10/s\n"
                                        + "policies.partner.quotas[0].count=7\n"
                                        + "policies.partner.quotas[0].period=week\n",
                                "t.properties")
                        .policies()
                        .get(0)
                        .quotas())
                .containsExactly(CalendarQuota.of(7, CalendarQuota.Period.WEEK, ZoneId.of("UTC")));
    }

    @Test
    void aBadQuotaIsNamedInTheError() {
        String policy = "policies: {p: {limits: [{capacity: 5, refill: 5/s}], quotas: [%s]}}";

        assertThat(error(policy.formatted("{count: 10, period: fortnight}")))
                .isEqualTo("t.yaml:1: policies.p.quotas[0].period: invalid calendar period 'fortnight': use hour,"
                        + " day, week or month");
        assertThat(error(policy.formatted("{count: 10, period: day, zone: Mars/Olympus}")))
                .isEqualTo("t.yaml:1: policies.p.quotas[0].zone: unknown time zone 'Mars/Olympus': use a name such"
                        + " as Europe/Paris or UTC");
        assertThat(error(policy.formatted("{count: 0, period: day}")))
                .isEqualTo("t.yaml:1: policies.p.quotas[0].count: a calendar quota's count must be 1 to 2^52, was 0");
        assertThat(error(policy.formatted("{count: 10, period: day, every: 2}")))
                .startsWith("t.yaml:1: policies.p.quotas[0]: unknown setting 'every'");
    }

    private static String error(String yaml) {
        try {
            RequestLimiterConfig.parse(yaml, "t.yaml");
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + yaml);
    }

    private static RequestDecision decide(RequestLimiter requests) {
        return requests.decide(TestRequest.get("/")).toCompletableFuture().join();
    }
}
