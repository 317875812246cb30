package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory slots cost memory only while permits are open. */
class InFlightSlotsTest {

    @Test
    void aKeyIsForgottenWhenItsLastPermitIsClosed() {
        InFlightSlots slots = new InFlightSlots();
        ConcurrencyLimit two = ConcurrencyLimit.of("two", 2);
        List<Permit> open = new ArrayList<>();
        for (int key = 0; key < 1_000; key++) {
            open.add(slots.tryAcquire("client-" + key, two, 2, null));
            open.add(slots.tryAcquire("client-" + key, two, 2, null));
        }
        int whileOpen = slots.keys();

        open.forEach(Permit::close);

        assertThat(whileOpen).isEqualTo(1_000);
        assertThat(slots.keys()).isZero();
    }
}
