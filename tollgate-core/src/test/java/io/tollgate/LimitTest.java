package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LimitTest {

    @Test
    void rejectsCapacityBelowOne() {
        assertThatThrownBy(() -> Limit.of(0, Rate.perSecond(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capacity must be at least 1, was 0");
        assertThatThrownBy(() -> Limit.of(-3, Rate.perSecond(1))).hasMessageContaining("was -3");
    }

    @Test
    void rejectsANullRate() {
        assertThatThrownBy(() -> Limit.of(1, null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void acceptsABillionTokensAtEveryRateFromAThousandPerHourToAMillionPerSecond() {
        assertThat(Limit.of(1_000_000_000, Rate.perSecond(1_000_000)).capacity())
                .isEqualTo(1_000_000_000);
        assertThat(Limit.of(1_000_000_000, Rate.perHour(1_000)).capacity()).isEqualTo(1_000_000_000);
        assertThat(Limit.of(1_000_000_000, Rate.perSecond(3)).capacity()).isEqualTo(1_000_000_000);
    }

    @Test
    void acceptsEveryRateDownToOnePerDayForPracticalCapacities() {
        assertThat(Limit.of(10_000, Rate.perDay(1)).refillTime()).isEqualTo(Duration.ofDays(10_000));
        assertThat(Limit.of(1_000, Rate.perDay(1_000)).refillTime()).isEqualTo(Duration.ofDays(1));
    }

    @Test
    void refusesALimitWhoseStateCannotStayExact() {
        assertThatThrownBy(() -> Limit.of(1_000_000_000, Rate.perDay(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacity 1000000000 refilled at 1/d")
                .hasMessageContaining("cannot be computed exactly");
    }

    @Test
    void acceptsTheLargestExactFillAndRefusesOneTokenMore() {
        long largest = 1L << 52; // one tick per token at 10^6/s

        assertThat(Limit.of(largest, Rate.perSecond(1_000_000)).capacity()).isEqualTo(largest);
        assertThatThrownBy(() -> Limit.of(largest + 1, Rate.perSecond(1_000_000)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void refillTimeIsCapacityOverRateRoundedUpToTheMicrosecond() {
        assertThat(Limit.of(10, Rate.perSecond(5)).refillTime()).isEqualTo(Duration.ofSeconds(2));
        assertThat(Limit.of(1, Rate.perSecond(3)).refillTime()).isEqualTo(Duration.ofNanos(333_334_000));
    }

    @Test
    void describesItself() {
        assertThat(Limit.of(10, Rate.perSecond(5))).hasToString("capacity 10 refilled at 5/s");
    }
}
