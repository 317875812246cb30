package io.tollgate.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Admissions the store never saw, charged once it answers again, a window at a time. */
class UnseenChargesTest {

    private static final Policy TEN = Policy.of("ten", Limit.of(10, Rate.perSecond(1)));

    private final UnseenCharges unseen = new UnseenCharges(100_000);

    @Test
    void eachKeysCostsAreChargedOnceAsTheirSum() {
        unseen.add(TEN, "alice", 2);
        unseen.add(TEN, "alice", 3);
        unseen.add(TEN, "bob", 1);
        List<String> charged = new ArrayList<>();

        unseen.drain((key, policy, cost) -> {
            charged.add(key + " " + cost);
            return CompletableFuture.completedFuture(null);
        });
        unseen.drain((key, policy, cost) -> {
            charged.add("again " + key);
            return CompletableFuture.completedFuture(null);
        });

        assertThat(charged).containsExactlyInAnyOrder("alice 5", "bob 1");
        assertThat(unseen.charged()).isEqualTo(2);
        assertThat(unseen.waiting()).isZero();
    }

    @Test
    void atMostOneWindowOfChargesIsOnItsWayAtOnceUntilEveryKeyIsCharged() {
        int keys = 1_000;
        for (int i = 0; i < keys; i++) {
            unseen.add(TEN, "key-" + i, 1);
        }
        List<CompletableFuture<Void>> onTheirWay = new ArrayList<>();
        Map<String, Integer> charges = new HashMap<>();
        UnseenCharges.Charger charger = (key, policy, cost) -> {
            charges.merge(key, 1, Integer::sum);
            CompletableFuture<Void> answer = new CompletableFuture<>();
            onTheirWay.add(answer);
            return answer;
        };

        unseen.drain(charger);
        int windows = 0;
        while (!onTheirWay.isEmpty()) {
            windows++;
            assertThat(onTheirWay).hasSizeLessThanOrEqualTo(UnseenCharges.WINDOW);
            unseen.drain(charger); // an answer from the store meanwhile starts no second drain
            assertThat(onTheirWay).hasSizeLessThanOrEqualTo(UnseenCharges.WINDOW);
            List<CompletableFuture<Void>> window = new ArrayList<>(onTheirWay);
            onTheirWay.clear();
            window.forEach(answer -> answer.complete(null)); // the last answer sends the next window
        }

        assertThat(charges)
                .hasSize(keys)
                .allSatisfy((key, times) -> assertThat(times).isEqualTo(1));
        assertThat(windows).isEqualTo((keys + UnseenCharges.WINDOW - 1) / UnseenCharges.WINDOW);
        assertThat(unseen.charged()).isEqualTo(keys);
    }

    @Test
    void aChargeThatFailsStopsTheDrainUntilTheStoreAnswersAgain() {
        int keys = 1_000;
        for (int i = 0; i < keys; i++) {
            unseen.add(TEN, "key-" + i, 1);
        }
        List<String> tried = new ArrayList<>();

        // As GuardedRateLimiter.chargeUnseen does while the store cannot be reached: the cost is noted again.
        unseen.drain((key, policy, cost) -> {
            tried.add(key);
            unseen.add(policy, key, cost);
            return CompletableFuture.failedFuture(new IllegalStateException("not connected"));
        });

        assertThat(tried).hasSize(UnseenCharges.WINDOW).doesNotHaveDuplicates();
        assertThat(unseen.waiting()).isEqualTo(keys);
        assertThat(unseen.charged()).isZero();
    }

    @Test
    void anAdmissionForAKeyBeyondTheBoundIsDroppedAndCounted() {
        UnseenCharges small = new UnseenCharges(2);

        boolean first = small.add(TEN, "a", 1);
        boolean second = small.add(TEN, "b", 1);
        boolean third = small.add(TEN, "c", 1);
        boolean again = small.add(TEN, "a", 4);

        assertThat(List.of(first, second, third, again)).containsExactly(true, true, false, true);
        assertThat(small.dropped()).isEqualTo(1);
        assertThat(small.waiting()).isEqualTo(2);
    }
}
