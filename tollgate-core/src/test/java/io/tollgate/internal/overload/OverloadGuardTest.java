package io.tollgate.internal.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Admission under the learnt limit, by priority: the lowest is refused first, the critical reserve is kept. */
class OverloadGuardTest {

    // A limit of 20 that does not move: a tenth kept for critical requests, and four tenths more from sheddable ones
    private final OverloadGuard guard = new OverloadGuard(20, 20, 20, 0.1, 0.4);

    @Test
    void shedsTheLowestPriorityFirstAndKeepsTheReserveForTheCritical() {
        int sheddable = enterAll(Priority.SHEDDABLE);
        int normal = enterAll(Priority.DEFAULT);
        int critical = enterAll(Priority.CRITICAL);

        assertThat(sheddable).as("sheddable, up to half the limit").isEqualTo(10);
        assertThat(normal).as("default, up to nine tenths").isEqualTo(8);
        assertThat(critical).as("critical, up to the whole limit").isEqualTo(2);
        assertThat(guard.inFlight()).isEqualTo(20);
        assertThat(guard.tryEnter(Priority.CRITICAL, 0)).isNull();
    }

    @Test
    void aSlotLeftMakesRoomAgainOnceHoweverOftenItIsLeft() {
        List<OverloadGuard.Slot> slots = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            slots.add(guard.tryEnter(Priority.SHEDDABLE, 0));
        }
        assertThat(guard.tryEnter(Priority.SHEDDABLE, 0)).isNull();

        slots.get(0).leave(1_000_000, false);
        slots.get(0).leave(1_000_000, false);
        slots.get(1).abandon();

        assertThat(guard.inFlight()).isEqualTo(8);
        assertThat(guard.tryEnter(Priority.SHEDDABLE, 0)).isNotNull();
    }

    @Test
    void failuresLowerTheLimitAndSoTheRoomOfEveryPriority() {
        OverloadGuard learning = new OverloadGuard(1, 20, 100, 0.1, 0.4);
        for (int i = 0; i < 5; i++) {
            learning.tryEnter(Priority.CRITICAL, 0).leave(1_000_000, true);
        }

        assertThat(learning.limit()).isEqualTo(11); // 20 x 0.9^5
        assertThat(learning.ceiling(Priority.SHEDDABLE)).isEqualTo(5);
        assertThat(learning.ceiling(Priority.DEFAULT)).isEqualTo(9);
    }

    @Test
    void readsPrioritiesAsConfigurationsWriteThemAndNamesABadOne() {
        assertThat(Priority.of("sheddable")).isEqualTo(Priority.SHEDDABLE);
        assertThat(Priority.CRITICAL.text()).isEqualTo("critical");
        assertThatThrownBy(() -> Priority.of("gold"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("priority must be critical, default or sheddable, was 'gold'");
        assertThatThrownBy(() -> new OverloadGuard(1, 10, 100, 0.6, 0.5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "the reserves must be at least 0 and at most 1 together, were critical 0.6 and default 0.5");
    }

    private int enterAll(Priority priority) {
        int admitted = 0;
        while (guard.tryEnter(priority, 0) != null) {
            admitted++;
        }
        return admitted;
    }
}
