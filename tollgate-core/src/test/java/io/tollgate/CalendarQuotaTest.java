package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Calendar quotas: where periods start and end in a time zone, daylight saving days included. */
class CalendarQuotaTest {

    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
    private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

    private static long micros(String instant) {
        Instant at = Instant.parse(instant);
        return at.getEpochSecond() * 1_000_000L + at.getNano() / 1_000;
    }

    private static String instant(long micros) {
        return Instant.ofEpochSecond(micros / 1_000_000L, micros % 1_000_000L * 1_000L)
                .toString();
    }

    @Test
    void aQuotaOfMillionsAnHourIsDecidedAndReportedByItsCount() {
        // 50 988 356 an hour is no rate a bucket counts exactly, nor one of that many tokens a second
        CalendarQuota hourly = CalendarQuota.of(50_988_356, CalendarQuota.Period.HOUR, ZoneId.of("UTC"));
        Policy policy = Policy.of("big", Limit.of(10, Rate.perSecond(10))).withQuota(hourly);
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();

        Decision decision = limiter.tryAcquire("alice", policy);

        assertThat(decision.allowed()).isTrue();
        assertThat(hourly.reportedLimit().capacity()).isEqualTo(50_988_356);
    }

    @Test
    void eachPeriodStartsWhereTheZonesCalendarSays() {
        long now = micros("2026-12-03T19:45:12.345678Z"); // Thursday, 20:45 in Paris

        assertThat(instant(CalendarQuota.of(1, CalendarQuota.Period.HOUR, PARIS).periodStartMicros(now)))
                .isEqualTo("2026-12-03T19:00:00Z");
        assertThat(instant(CalendarQuota.of(1, CalendarQuota.Period.DAY, PARIS).periodStartMicros(now)))
                .isEqualTo("2026-12-02T23:00:00Z");
        assertThat(instant(CalendarQuota.of(1, CalendarQuota.Period.WEEK, PARIS).periodStartMicros(now)))
                .isEqualTo("2026-11-29T23:00:00Z"); // Monday the 30th, midnight in Paris
        assertThat(instant(
                        CalendarQuota.of(1, CalendarQuota.Period.MONTH, PARIS).periodStartMicros(now)))
                .isEqualTo("2026-11-30T23:00:00Z");
        assertThat(instant(
                        CalendarQuota.of(1, CalendarQuota.Period.MONTH, PARIS).nextStartMicros(now)))
                .isEqualTo("2026-12-31T23:00:00Z");
    }

    @Test
    void theDayDaylightSavingTimeStartsHas23HoursAndTheDayItEnds25() {
        CalendarQuota daily = CalendarQuota.of(1, CalendarQuota.Period.DAY, NEW_YORK);
        long springDay = micros("2026-03-08T12:00:00Z");
        long autumnDay = micros("2026-11-01T12:00:00Z");

        assertThat(Duration.ofNanos((daily.nextStartMicros(springDay) - daily.periodStartMicros(springDay)) * 1_000))
                .isEqualTo(Duration.ofHours(23));
        assertThat(Duration.ofNanos((daily.nextStartMicros(autumnDay) - daily.periodStartMicros(autumnDay)) * 1_000))
                .isEqualTo(Duration.ofHours(25));
    }

    @Test
    void anHourTheClockShowsTwiceIsTwoPeriods() {
        CalendarQuota hourly = CalendarQuota.of(1, CalendarQuota.Period.HOUR, NEW_YORK);
        long firstOneThirty = micros("2026-11-01T05:30:00Z"); // 01:30 EDT
        long secondOneThirty = micros("2026-11-01T06:30:00Z"); // 01:30 EST

        assertThat(List.of(
                        instant(hourly.periodStartMicros(firstOneThirty)),
                        instant(hourly.nextStartMicros(firstOneThirty)),
                        instant(hourly.periodStartMicros(secondOneThirty)),
                        instant(hourly.nextStartMicros(secondOneThirty))))
                .containsExactly(
                        "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z");
    }

    @Test
    void aDayWithoutMidnightStartsAtItsFirstMoment() {
        // Sao Paulo skipped from 00:00 to 01:00 on 4 November 2018
        CalendarQuota daily = CalendarQuota.of(1, CalendarQuota.Period.DAY, ZoneId.of("America/Sao_Paulo"));

        assertThat(instant(daily.periodStartMicros(micros("2018-11-04T12:00:00Z"))))
                .isEqualTo("2018-11-04T03:00:00Z"); // 01:00 local, UTC-2
    }

    @Test
    void aLeapYearsFebruaryHas29Days() {
        CalendarQuota monthly = CalendarQuota.of(1, CalendarQuota.Period.MONTH, ZoneId.of("UTC"));
        long now = micros("2028-02-10T00:00:00Z");

        assertThat(Duration.ofNanos((monthly.nextStartMicros(now) - monthly.periodStartMicros(now)) * 1_000))
                .isEqualTo(Duration.ofDays(29));
    }

    @Test
    void badQuotasAreRefusedNamingTheValue() {
        assertThatThrownBy(() -> CalendarQuota.of(0, CalendarQuota.Period.DAY, PARIS))
                .hasMessage("a calendar quota's count must be 1 to 2^52, was 0");
        assertThatThrownBy(() -> CalendarQuota.Period.parse("fortnight"))
                .hasMessage("invalid calendar period 'fortnight': use hour, day, week or month");
        assertThat(CalendarQuota.Period.parse(" Month ")).isEqualTo(CalendarQuota.Period.MONTH);
        assertThatThrownBy(() -> Policy.of("p", Limit.of(10, Rate.perSecond(1)))
                        .withQuota(CalendarQuota.of(5, CalendarQuota.Period.DAY, PARIS))
                        .checkCost(6))
                .hasMessageContaining("cost 6 exceeds the smallest capacity (5)");
    }
}
