package io.tollgate.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.Priority;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Admission under the learnt limit, by priority: the lowest is refused first, the critical reserve is kept, and a
 * request that finds no room waits a bounded time, the highest priority and then the newest admitted first.
 */
class OverloadGuardTest {

    private static final long MS = 1_000_000;

    // A limit of 20 that does not move: a tenth kept for critical requests, and four tenths more from sheddable ones
    private final OverloadGuard refusing = new OverloadGuard(20, 20, 20, 0.1, 0.4, 0);
    private final OverloadGuard waiting = new OverloadGuard(20, 20, 20, 0.1, 0.4, 50 * MS);

    @Test
    void shedsTheLowestPriorityFirstAndKeepsTheReserveForTheCritical() {
        int sheddable = enterAll(refusing, Priority.SHEDDABLE);
        int normal = enterAll(refusing, Priority.DEFAULT);
        int critical = enterAll(refusing, Priority.CRITICAL);

        assertThat(sheddable).as("sheddable, up to half the limit").isEqualTo(10);
        assertThat(normal).as("default, up to nine tenths").isEqualTo(8);
        assertThat(critical).as("critical, up to the whole limit").isEqualTo(2);
        assertThat(refusing.inFlight()).isEqualTo(20);
        assertThat(refusing.enter(Priority.CRITICAL, 0)).isCompletedWithValue(null);
    }

    @Test
    void aSlotLeftMakesRoomAgainOnceHoweverOftenItIsLeft() {
        List<OverloadGuard.Slot> slots = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            slots.add(refusing.enter(Priority.SHEDDABLE, 0).join());
        }
        assertThat(refusing.enter(Priority.SHEDDABLE, 0)).isCompletedWithValue(null);

        slots.get(0).leave(MS, false);
        slots.get(0).leave(MS, false);
        slots.get(1).abandon(MS);
        slots.get(1).abandon(MS);

        assertThat(refusing.inFlight()).isEqualTo(8);
        assertThat(refusing.enter(Priority.SHEDDABLE, 0).join()).isNotNull();
    }

    @Test
    void failuresLowerTheLimitAndSoTheRoomOfEveryPriority() {
        OverloadGuard learning = new OverloadGuard(1, 20, 100, 0.1, 0.4, 0);
        for (int i = 0; i < 5; i++) {
            learning.enter(Priority.CRITICAL, 0).join().leave(MS, true);
        }

        assertThat(learning.limit()).isEqualTo(11); // 20 x 0.9^5
        assertThat(learning.ceiling(Priority.SHEDDABLE)).isEqualTo(5);
        assertThat(learning.ceiling(Priority.DEFAULT)).isEqualTo(9);
    }

    @Test
    void aRequestThatFindsNoRoomWaitsAndTakesTheNextSlotThatFrees() {
        List<OverloadGuard.Slot> slots = fill(waiting, Priority.SHEDDABLE, 10);

        CompletableFuture<OverloadGuard.Slot> queued = waiting.enter(Priority.SHEDDABLE, 2 * MS);
        assertThat(queued).isNotDone();
        assertThat(waiting.waiting()).isEqualTo(1);

        slots.get(0).leave(5 * MS, false);

        assertThat(queued).isCompleted();
        assertThat(queued.join().waitedNanos()).isEqualTo(3 * MS);
        assertThat(waiting.inFlight()).isEqualTo(10);
        assertThat(waiting.waiting()).isZero();
    }

    @Test
    void aFreedSlotGoesToTheHighestPriorityWaitingThenToTheNewest() {
        List<OverloadGuard.Slot> slots = new ArrayList<>(fill(waiting, Priority.CRITICAL, 20));
        CompletableFuture<OverloadGuard.Slot> sheddable = waiting.enter(Priority.SHEDDABLE, MS);
        CompletableFuture<OverloadGuard.Slot> olderDefault = waiting.enter(Priority.DEFAULT, 2 * MS);
        CompletableFuture<OverloadGuard.Slot> newerDefault = waiting.enter(Priority.DEFAULT, 3 * MS);
        CompletableFuture<OverloadGuard.Slot> critical = waiting.enter(Priority.CRITICAL, 4 * MS);

        slots.remove(0).leave(10 * MS, false);
        assertThat(critical).as("critical first, though it came last").isCompleted();
        assertThat(newerDefault).isNotDone();

        // 20 in flight again: default has room below 18, sheddable below 10
        for (int i = 0; i < 3; i++) {
            slots.remove(0).leave(11 * MS, false);
        }
        assertThat(newerDefault).as("then the newest default").isCompleted();
        assertThat(olderDefault).isNotDone();
        slots.remove(0).leave(12 * MS, false);
        assertThat(olderDefault).isCompleted();
        assertThat(sheddable).as("no room for sheddable above 10 in flight").isNotDone();
    }

    @Test
    void aRequestThatWaitedItsMostIsRefused() {
        fill(waiting, Priority.SHEDDABLE, 10);
        CompletableFuture<OverloadGuard.Slot> queued = waiting.enter(Priority.SHEDDABLE, 0);

        waiting.expire(49 * MS);
        assertThat(queued).isNotDone();
        waiting.expire(50 * MS);

        assertThat(queued).isCompletedWithValue(null);
        assertThat(waiting.waiting()).isZero();
    }

    @Test
    void aFullQueueRefusesTheOldestOfALowerPriorityToMakeRoomAndElseTheNewcomer() {
        fill(waiting, Priority.CRITICAL, 20);
        List<CompletableFuture<OverloadGuard.Slot>> sheddable = new ArrayList<>();
        for (int i = 0; i < 20; i++) { // as many waiting as the limit: the queue is full
            sheddable.add(waiting.enter(Priority.SHEDDABLE, i));
        }

        assertThat(waiting.enter(Priority.SHEDDABLE, 20))
                .as("no one lower to refuse")
                .isCompletedWithValue(null);
        CompletableFuture<OverloadGuard.Slot> critical = waiting.enter(Priority.CRITICAL, 21);

        assertThat(critical).isNotDone();
        assertThat(sheddable.get(0)).as("the oldest sheddable").isCompletedWithValue(null);
        assertThat(sheddable.subList(1, 20))
                .allSatisfy(future -> assertThat(future).isNotDone());
        assertThat(waiting.waiting()).isEqualTo(20);
    }

    @Test
    void aSlotWhoseWaiterGaveUpGoesToTheNext() {
        List<OverloadGuard.Slot> slots = fill(waiting, Priority.SHEDDABLE, 10);
        CompletableFuture<OverloadGuard.Slot> older = waiting.enter(Priority.SHEDDABLE, MS);
        CompletableFuture<OverloadGuard.Slot> newer = waiting.enter(Priority.SHEDDABLE, 2 * MS);
        newer.cancel(false); // its client went away

        slots.get(0).leave(3 * MS, false);

        assertThat(older).isCompleted();
        assertThat(waiting.inFlight()).isEqualTo(10);
    }

    @Test
    void aNewcomerDoesNotOvertakeWaitersOfItsOwnPriority() {
        OverloadGuard guard = new OverloadGuard(4, 4, 4, 0, 0, 50 * MS);
        List<OverloadGuard.Slot> slots = fill(guard, Priority.DEFAULT, 4);
        CompletableFuture<OverloadGuard.Slot> queued = guard.enter(Priority.DEFAULT, MS);
        slots.get(0).leave(2 * MS, false); // admits the waiter: the room is taken again

        assertThat(queued).isCompleted();
        assertThat(guard.enter(Priority.DEFAULT, 3 * MS)).isNotDone();
    }

    @Test
    void manyThreadsEnteringWaitingAndLeavingLeaveNoSlotAndNoWaiterBehind() throws Exception {
        OverloadGuard guard = new OverloadGuard(2, 8, 16, 0.1, 0.2, 2 * MS);
        int threads = 16;
        AtomicInteger overLimit = new AtomicInteger();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Priority priority = Priority.values()[t % 3];
            Thread thread = new Thread(() -> {
                for (int i = 0; i < 2_000; i++) {
                    CompletableFuture<OverloadGuard.Slot> admission = guard.enter(priority, System.nanoTime());
                    OverloadGuard.Slot slot;
                    try {
                        slot = admission.get(5, TimeUnit.MILLISECONDS);
                    } catch (TimeoutException late) {
                        guard.expire(System.nanoTime() + 2 * MS);
                        slot = admission.join();
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                    if (slot != null) {
                        if (guard.inFlight() > 16) {
                            overLimit.incrementAndGet();
                        }
                        Thread.onSpinWait();
                        slot.leave(System.nanoTime(), i % 50 == 0);
                    }
                }
            });
            running.add(thread);
            thread.start();
        }
        for (Thread thread : running) {
            thread.join(60_000);
        }

        assertThat(overLimit).hasValue(0);
        assertThat(guard.inFlight()).isZero();
        assertThat(guard.waiting()).isZero();
    }

    @Test
    void readsPrioritiesAsConfigurationsWriteThemAndNamesABadOne() {
        assertThat(Priority.of("sheddable")).isEqualTo(Priority.SHEDDABLE);
        assertThat(Priority.CRITICAL.text()).isEqualTo("critical");
        assertThatThrownBy(() -> Priority.of("gold"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("priority must be critical, default or sheddable, was 'gold'");
        assertThatThrownBy(() -> new OverloadGuard(1, 10, 100, 0.6, 0.5, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "the reserves must be at least 0 and at most 1 together, were critical 0.6 and default 0.5");
        assertThatThrownBy(() -> new OverloadGuard(1, 10, 100, 0.1, 0.1, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the wait must be at least 0 ns, was -1");
    }

    private static int enterAll(OverloadGuard guard, Priority priority) {
        int admitted = 0;
        while (guard.enter(priority, 0).join() != null) {
            admitted++;
        }
        return admitted;
    }

    private static List<OverloadGuard.Slot> fill(OverloadGuard guard, Priority priority, int count) {
        List<OverloadGuard.Slot> slots = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            OverloadGuard.Slot slot = guard.enter(priority, 0).join();
            assertThat(slot).as("slot %d", i).isNotNull();
            slots.add(slot);
        }
        return slots;
    }
}
