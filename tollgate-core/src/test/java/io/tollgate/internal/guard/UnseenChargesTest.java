package io.tollgate.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Admissions the store never saw, charged once it answers again. */
class UnseenChargesTest {

    private static final Policy TEN = Policy.of("ten", Limit.of(10, Rate.perSecond(1)));

    private final UnseenCharges unseen = new UnseenCharges(100_000);

    @Test
    void eachKeysCostsAreChargedOnceAsTheirSum() {
        unseen.add(TEN, "alice", 2);
        unseen.add(TEN, "alice", 3);
        unseen.add(TEN, "bob", 1);
        List<String> charged = new ArrayList<>();

        unseen.flush((key, policy, cost) -> charged.add(key + " " + cost));
        unseen.flush((key, policy, cost) -> charged.add("again " + key));

        assertThat(charged).containsExactlyInAnyOrder("alice 5", "bob 1");
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void aChargeThatFailsAtOnceAndNotesItselfAgainWaitsForTheNextFlush() {
        int keys = 20_000; // enough for keys to share the map's bins, where a re-noted key would be met again
        for (int i = 0; i < keys; i++) {
            unseen.add(TEN, "key-" + i, 1);
        }
        Set<String> charged = new HashSet<>();

        // As GuardedRateLimiter.chargeUnseen does while the store cannot be reached: the charge fails on
        // this thread, and the cost is noted again.
        unseen.flush((key, policy, cost) -> {
            if (!charged.add(key)) {
                throw new AssertionError("'" + key + "' charged twice in one flush");
            }
            unseen.add(policy, key, cost);
        });

        assertThat(charged).hasSize(keys);
    }
}
