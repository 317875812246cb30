package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TokenBucketTest {

    /**
     * Request i after the burst comes when token i is due, ceil(i × period / tokens) µs: on time when a
     * token takes a whole number of microseconds, otherwise up to a microsecond late. A capacity of 2
     * absorbs that lateness; with a capacity of 1 it would be lost, as in any token bucket.
     */
    @ParameterizedTest
    @CsvSource({"1, 1000000/s", "1, 4/ms", "2, 7/ms", "1, 1/d", "2, 3/s", "5, 7 per 3s", "100, 999999 per 1000001us"})
    void admitsAMillionRequestsAtExactlyTheRefillRateAndNotOneMore(long capacity, String rate) {
        Limit limit = Limit.of(capacity, Rate.parse(rate));
        Policy policy = Policy.of("exact", limit);
        ManualTimeSource time = new ManualTimeSource();
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        long tokens = limit.refill().tokens();
        long periodMicros = limit.refill().period().toNanos() / 1_000;
        for (long i = 0; i < capacity; i++) {
            assertThat(limiter.tryAcquire("k", policy).allowed()).isTrue();
        }

        long admitted = 0;
        for (long i = 1; i <= 1_000_000; i++) {
            // the i-th token after the burst arrives at exactly ceil(i × period / tokens) µs
            long due = TokenBucket.ceilDiv(Math.multiplyExact(i, periodMicros), tokens);
            time.advanceMicros(due - time.nowMicros());
            if (limiter.tryAcquire("k", policy).allowed()) {
                admitted++;
            }
        }
        Decision oneMore = limiter.tryAcquire("k", policy);

        assertThat(admitted).isEqualTo(1_000_000);
        assertThat(oneMore.allowed()).isFalse();
        assertThat(oneMore.remaining()).isZero();
    }

    @Test
    void aRequestOneMicrosecondEarlierThanItsTokenIsRefused() {
        Policy policy = Policy.of("exact", Limit.of(1, Rate.perSecond(3)));
        ManualTimeSource time = new ManualTimeSource();
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        limiter.tryAcquire("k", policy);

        time.advanceMicros(333_333); // the token is due at 333 333.3 µs
        Decision early = limiter.tryAcquire("k", policy);
        time.advanceMicros(1);
        Decision due = limiter.tryAcquire("k", policy);

        assertThat(early.allowed()).isFalse();
        assertThat(early.retryAfter()).isEqualTo(Duration.ofNanos(1_000));
        assertThat(due.allowed()).isTrue();
    }

    @Test
    void debtFallsByTheElapsedTicksAndStopsAtZero() {
        Limit limit = Limit.of(10, Rate.perSecond(3)); // 3 ticks per µs

        assertThat(TokenBucket.debtAfter(100, 30, limit)).isEqualTo(10);
        assertThat(TokenBucket.debtAfter(100, 33, limit)).isEqualTo(1);
        assertThat(TokenBucket.debtAfter(100, 34, limit)).isZero();
        assertThat(TokenBucket.debtAfter(100, Long.MAX_VALUE, limit)).isZero();
    }

    @Test
    void chargingAddsCostTimesTheTicksPerToken() {
        Limit limit = Limit.of(10, Rate.perSecond(3)); // P = 1 000 000 ticks of 1/3 µs

        assertThat(TokenBucket.charge(5, 2, limit)).isEqualTo(2_000_005);
    }

    @Test
    void waitIsTheExcessOverAFullRefillInMicrosecondsRoundedUp() {
        Limit limit = Limit.of(1, Rate.perSecond(3)); // fill = 1 000 000 ticks, 3 ticks per µs

        assertThat(TokenBucket.waitMicros(1_000_000, limit)).isZero();
        assertThat(TokenBucket.waitMicros(1_000_001, limit)).isEqualTo(1);
        assertThat(TokenBucket.waitMicros(1_000_003, limit)).isEqualTo(1);
        assertThat(TokenBucket.waitMicros(1_000_004, limit)).isEqualTo(2);
    }

    @Test
    void aReservationMayNotPushTheDebtPastTwoToThe53MinusAFill() {
        Limit limit = Limit.of(1L << 52, Rate.perSecond(1_000_000)); // fill = 2^52 ticks, 1 per µs

        assertThat(TokenBucket.fits(1L << 53, limit, Long.MAX_VALUE)).isFalse();
        assertThat(TokenBucket.fits(1L << 52, limit, Long.MAX_VALUE)).isTrue();
        assertThat(TokenBucket.fits((1L << 52) + 1, limit, Long.MAX_VALUE)).isFalse();
    }

    @Test
    void remainingCountsWholeTokensOnly() {
        Limit limit = Limit.of(10, Rate.perSecond(10)); // P = 100 000

        assertThat(TokenBucket.remaining(0, limit)).isEqualTo(10);
        assertThat(TokenBucket.remaining(1, limit)).isEqualTo(9);
        assertThat(TokenBucket.remaining(1_000_000, limit)).isZero();
        assertThat(TokenBucket.remaining(1_500_000, limit)).isZero();
    }

    @Test
    void conversionKeepsTheTokensSpentUpToTheNewCapacity() {
        Limit from = Limit.of(10, Rate.perSecond(10));
        Limit bigger = Limit.of(100, Rate.perMinute(60));
        Limit smaller = Limit.of(3, Rate.perSecond(1));
        long sevenAndAHalfTokens = 250_000; // 2.5 spent: the half-refilled token counts as spent

        assertThat(TokenBucket.remaining(TokenBucket.convert(sevenAndAHalfTokens, from, bigger), bigger))
                .isEqualTo(97);
        assertThat(TokenBucket.remaining(TokenBucket.convert(sevenAndAHalfTokens, from, smaller), smaller))
                .isEqualTo(0);
        assertThat(TokenBucket.convert(0, from, smaller)).isZero();
    }

    @Test
    void aFullBucketStaysFullUnderTheNewLimitAsNoBucketWould() {
        Limit from = Limit.of(1, Rate.perSecond(1));
        Limit bigger = Limit.of(2, Rate.perSecond(1));

        assertThat(TokenBucket.convert(0, from, bigger)).isZero();
        assertThat(TokenBucket.remaining(TokenBucket.convert(1, from, bigger), bigger))
                .as("a tick short of full has spent a token, rounded up")
                .isEqualTo(1);
    }

    @Test
    void aRefusalReportsTheLimitThatKeepsTheRequestWaitingLongest() {
        List<Limit> limits = List.of(Limit.of(10, Rate.perSecond(10)), Limit.of(100, Rate.perHour(100)));
        long[] debts = {1_000_000, 3_600_000_000L}; // both empty; the hourly one waits 36 s per token

        Decision decision = TokenBucket.decide(limits, debts, 1, 0);

        assertThat(decision.allowed()).isFalse();
        assertThat(decision.limitIndex()).isEqualTo(1);
        assertThat(decision.retryAfter()).isEqualTo(Duration.ofSeconds(36));
    }

    @Test
    void anAllowedRequestReportsTheLimitWithTheFewestTokensLeft() {
        List<Limit> limits = List.of(Limit.of(10, Rate.perSecond(10)), Limit.of(100, Rate.perHour(100)));
        long[] debts = {0, 36_000_000L * 95}; // 10 and 5 tokens left

        Decision decision = TokenBucket.decide(limits, debts, 1, 0);

        assertThat(decision.allowed()).isTrue();
        assertThat(decision.limitIndex()).isEqualTo(1);
        assertThat(decision.remaining()).isEqualTo(4);
    }
}
