package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Calendar quotas in memory: counted with the limits, atomically, and given back whole at the boundary. */
class InMemoryQuotaTest {

    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    private static ManualTimeSource at(String instant) {
        Instant at = Instant.parse(instant);
        return new ManualTimeSource(at.getEpochSecond() * 1_000_000L + at.getNano() / 1_000);
    }

    private static Policy threeADay(ZoneId zone) {
        return Policy.of("daily", Limit.of(100, Rate.perSecond(100)))
                .withQuota(CalendarQuota.of(3, CalendarQuota.Period.DAY, zone));
    }

    @Test
    void refusesOnceTheDaysCountIsSpentUntilMidnightInTheZone() {
        ManualTimeSource time = at("2026-12-03T20:00:00Z"); // 15:00 in New York
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        Policy daily = threeADay(NEW_YORK);

        List<Boolean> allowed = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            allowed.add(limiter.tryAcquire("k", daily).allowed());
        }
        Decision fourth = limiter.tryAcquire("k", daily);
        time.advance(Duration.ofHours(9).minusMillis(1));
        boolean justBeforeMidnight = limiter.tryAcquire("k", daily).allowed();
        time.advance(Duration.ofMillis(1));
        Decision afterMidnight = limiter.tryAcquire("k", daily);

        assertThat(allowed).containsOnly(true);
        assertThat(fourth.allowed()).isFalse();
        assertThat(fourth.limitIndex()).isEqualTo(1);
        assertThat(fourth.limit().capacity()).isEqualTo(3);
        assertThat(fourth.remaining()).isZero();
        assertThat(fourth.retryAfter()).isEqualTo(Duration.ofHours(9));
        assertThat(justBeforeMidnight).isFalse();
        assertThat(afterMidnight.allowed()).isTrue();
        assertThat(afterMidnight.remaining()).isEqualTo(2);
        assertThat(afterMidnight.resetAfter()).isEqualTo(Duration.ofHours(24));
    }

    @Test
    void onTheDayDaylightSavingTimeStartsTheNextDayIs23HoursAway() {
        ManualTimeSource time = at("2026-03-08T05:30:00Z"); // 00:30 EST, the day clocks jump to 03:00
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        Policy daily = threeADay(NEW_YORK);
        for (int i = 0; i < 3; i++) {
            limiter.tryAcquire("k", daily);
        }

        Decision refused = limiter.tryAcquire("k", daily);

        assertThat(refused.retryAfter()).isEqualTo(Duration.ofMinutes(22 * 60 + 30));
    }

    @Test
    void aRequestTheQuotaRefusesTakesNoTokensAndOneTheBucketRefusesCountsNothing() {
        ManualTimeSource time = at("2026-12-03T12:00:00Z");
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        Policy tight = Policy.of("tight", Limit.of(2, Rate.perHour(2)))
                .withQuota(CalendarQuota.of(3, CalendarQuota.Period.DAY, ZoneId.of("UTC")));

        limiter.tryAcquire("k", tight);
        limiter.tryAcquire("k", tight);
        Decision byBucket = limiter.tryAcquire("k", tight);
        time.advance(Duration.ofHours(1));
        Decision third = limiter.tryAcquire("k", tight);
        Decision byQuota = limiter.tryAcquire("k", tight);

        assertThat(byBucket.allowed()).isFalse();
        assertThat(byBucket.limitIndex()).isZero();
        assertThat(third.allowed()).isTrue();
        assertThat(third.remaining()).isZero();
        assertThat(byQuota.allowed()).isFalse();
        assertThat(byQuota.limitIndex()).isEqualTo(1);
        assertThat(byQuota.retryAfter()).isEqualTo(Duration.ofHours(11));
        assertThat(limiter.inspect("k", tight).tokens()).isEqualTo(1); // the quota's refusal took no token
    }

    @Test
    void chargesCountBeyondTheQuotaAndRefundsCountBack() {
        ManualTimeSource time = at("2026-12-03T12:00:00Z");
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        Policy daily = threeADay(ZoneId.of("UTC"));

        limiter.charge("k", daily, 5);
        boolean afterCharge = limiter.tryAcquire("k", daily).allowed();
        limiter.refundAsync("k", daily, 3).toCompletableFuture().join();
        Decision afterRefund = limiter.tryAcquire("k", daily);

        assertThat(afterCharge).isFalse();
        assertThat(afterRefund.allowed()).isTrue();
        assertThat(afterRefund.remaining()).isZero();
    }

    @Test
    void aKeyWithACountIsKeptUntilItsPeriodEnds() {
        ManualTimeSource time = at("2026-12-03T12:00:00Z");
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        Policy daily = threeADay(ZoneId.of("UTC"));
        for (int i = 0; i < 3; i++) {
            limiter.tryAcquire("k", daily);
        }

        time.advance(Duration.ofHours(6)); // the bucket has long been full again
        limiter.tryAcquire("other", daily); // lets the limiter sweep idle keys

        assertThat(limiter.tryAcquire("k", daily).allowed()).isFalse();
    }
}
