package io.tollgate.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DeadlinesTest {

    /** A reader that runs the task it is asked to at once. */
    private static final Executor READER_THAT_KEEPS_UP = Runnable::run;

    private final Deadlines deadlines = new Deadlines(Duration.ofMillis(200));

    /**
     * Time that passes only while the deadlines' thread waits, exactly as long as it asked, and as far as the test
     * lets it: no thread is ever held up, so when a call ends can be asserted to the millisecond. (On the machine's
     * clock a thread on two busy cores may wait tens of milliseconds for a core, and the deadlines rightly add that
     * to the store's budget.)
     */
    private final VirtualTime virtualTime = new VirtualTime();

    private final Deadlines onVirtualTime = new Deadlines(Duration.ofMillis(200), virtualTime);

    @AfterEach
    void close() {
        deadlines.close();
        onVirtualTime.close();
    }

    @Test
    void aCallThatOutlastsTheBudgetFailsWithATimeoutOnceTheBudgetIsSpent() {
        long start = System.nanoTime();

        CompletableFuture<String> call = deadlines.limit(new CompletableFuture<>());

        assertThatThrownBy(call::join)
                .isInstanceOf(CompletionException.class)
                .cause()
                .isInstanceOf(TimeoutException.class)
                .hasMessage("no answer within 200 ms");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(200L, 2_000L);
    }

    @Test
    void aCallThatCompletesInTimeKeepsItsAnswer() throws Exception {
        CompletableFuture<String> call = deadlines.limit(new CompletableFuture<>());

        call.complete("answer");
        TimeUnit.MILLISECONDS.sleep(400);

        assertThat(call.join()).isEqualTo("answer");
    }

    @Test
    void aCallWhoseAnswerArrivedInTimeWaitsOneMoreBudgetToBeDelivered() throws Exception {
        StoreAnswer answer = new StoreAnswer();
        CompletableFuture<String> call = onVirtualTime.limit(new CompletableFuture<>(), answer);

        virtualTime.runUntil(100);
        answer.arrived();
        virtualTime.runUntil(300);
        assertThat(call).as("past its deadline, with its answer arrived").isNotDone();
        call.complete("answer");

        assertThat(call.join()).isEqualTo("answer");
    }

    @Test
    void aCallWhoseAnswerArrivedButIsNeverDeliveredTimesOutOneBudgetLater() {
        StoreAnswer answer = new StoreAnswer();
        answer.arrived();

        assertThat(virtualMillisUntilTimedOut(answer)).isEqualTo(400L);
    }

    @Test
    void aCallWhoseReaderKeepsUpIsEndedAtItsDeadline() {
        long endedAfter = virtualMillisUntilTimedOut(new StoreAnswer(READER_THAT_KEEPS_UP));

        assertThat(endedAfter)
                .as("the reader ran the task at once: the store is late, no budget more")
                .isEqualTo(200L);
    }

    @Test
    void aCallWhoseReaderIsHeldUpAtItsDeadlineKeepsTheAnswerReadOnceTheReaderIsFree() throws Exception {
        ExecutorService reader = Executors.newSingleThreadExecutor();
        try {
            CountDownLatch busy = new CountDownLatch(1);
            CompletableFuture<String> call = onVirtualTime.limit(new CompletableFuture<>(), new StoreAnswer(reader));
            // The reader is busy past the deadline (another reply's answers, say); then it reads this answer
            reader.execute(() -> {
                await(busy);
                call.complete("answer");
            });

            virtualTime.runUntil(300);
            assertThat(call)
                    .as("past its deadline, while its reader is held up")
                    .isNotDone();
            busy.countDown();

            assertThat(call.join()).isEqualTo("answer");
        } finally {
            reader.shutdownNow();
        }
    }

    @Test
    void aCallWhoseReaderIsHeldUpAndNeverReadsAnAnswerIsEndedOneBudgetAfterItsDeadline() {
        ExecutorService reader = Executors.newSingleThreadExecutor();
        CountDownLatch busy = new CountDownLatch(1);
        reader.execute(() -> await(busy));
        try {
            long endedAfter = virtualMillisUntilTimedOut(new StoreAnswer(reader));

            assertThat(endedAfter)
                    .as("one budget, then one more while the reader did not run the task")
                    .isEqualTo(400L);
        } finally {
            busy.countDown();
            reader.shutdownNow();
        }
    }

    @Test
    void aCallWrittenAtOnceWhoseReaderKeepsUpIsEndedAtItsDeadline() {
        StoreAnswer answer = new StoreAnswer(READER_THAT_KEEPS_UP);
        answer.sent(virtualTime.nanoTime());

        assertThat(virtualMillisUntilTimedOut(answer))
                .as("the store had its whole budget from the write")
                .isEqualTo(200L);
    }

    @Test
    void aCallWrittenLateByItsHeldUpReaderIsGivenOneBudgetMore() throws Exception {
        ExecutorService reader = Executors.newSingleThreadExecutor();
        try {
            StoreAnswer answer = new StoreAnswer(reader);
            CountDownLatch free = new CountDownLatch(1);
            // The reader, held up until just before the deadline, writes the request then, and is free when asked
            reader.execute(() -> {
                await(free);
                answer.sent(virtualTime.nanoTime());
            });
            CompletableFuture<Long> endedAt =
                    virtualMillisWhenTimedOut(onVirtualTime.limit(new CompletableFuture<>(), answer));

            virtualTime.runUntil(185);
            free.countDown();
            virtualTime.runFreely();

            assertThat(endedAt.join())
                    .as("written 15 ms before its deadline: the store has not had its time")
                    .isEqualTo(400L);
        } finally {
            reader.shutdownNow();
        }
    }

    @Test
    void aCallWhoseReaderHasStoppedIsEndedAtItsDeadline() {
        ExecutorService reader = Executors.newSingleThreadExecutor();
        reader.shutdown();

        assertThat(virtualMillisUntilTimedOut(new StoreAnswer(reader))).isEqualTo(200L);
    }

    /** Starts a call that waits for {@code answer}, which never comes; returns when it timed out, in ms. */
    private long millisUntilTimedOut(StoreAnswer answer) {
        long start = System.nanoTime();
        CompletableFuture<String> call = deadlines.limit(new CompletableFuture<>(), answer);

        assertThat(call.handle((value, failure) -> failure).join()).isInstanceOf(TimeoutException.class);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    /** As {@link #millisUntilTimedOut(StoreAnswer)}, on {@link #virtualTime} running freely. */
    private long virtualMillisUntilTimedOut(StoreAnswer answer) {
        CompletableFuture<Long> endedAt =
                virtualMillisWhenTimedOut(onVirtualTime.limit(new CompletableFuture<>(), answer));
        virtualTime.runFreely();
        return endedAt.join();
    }

    /** When {@code call} timed out on {@link #virtualTime}, in ms from its start; fails if it ended otherwise. */
    private CompletableFuture<Long> virtualMillisWhenTimedOut(CompletableFuture<String> call) {
        return call.handle((answer, failure) -> {
            assertThat(failure).isInstanceOf(TimeoutException.class);
            return virtualTime.millis(); // read on the thread that ended the call, as it ended it
        });
    }

    /**
     * A clock that moves only when the deadlines' thread waits, by exactly what it asked to wait, and only as far as
     * the test lets it: {@link #runUntil} holds the thread at a time, with everything due by then done, so the test
     * acts at a known point of a call's life however slow the machine. It starts held at 0 ms.
     */
    private static final class VirtualTime implements Deadlines.Parker {

        private static final long START = TimeUnit.SECONDS.toNanos(1);

        private long now = START;
        private long until = START;
        private long stall;
        private boolean held;

        @Override
        public void parkNanos(Object blocker, long nanos) {
            synchronized (this) {
                while (now + nanos > until) {
                    held = true;
                    notifyAll();
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                now += nanos + stall;
                stall = 0;
            }
            Thread.yield(); // lets a reader thread that was asked a task run, as it would while the thread slept
        }

        @Override
        public synchronized long nanoTime() {
            return now;
        }

        /** Milliseconds since this clock started. */
        synchronized long millis() {
            return TimeUnit.NANOSECONDS.toMillis(now - START);
        }

        /** The thread's next wait lasts {@code stall} longer than it asked: the process did not run meanwhile. */
        synchronized void stallNextPark(Duration stall) {
            this.stall = stall.toNanos();
        }

        /** Lets the thread run until {@code millis} ms and returns once it is held there, with nothing more due. */
        synchronized void runUntil(long millis) throws InterruptedException {
            until = START + TimeUnit.MILLISECONDS.toNanos(millis);
            held = false;
            notifyAll();
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!held) {
                long left = giveUp - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError(
                            "the deadlines' thread did not wait again by " + millis + " ms: no call was left running");
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }

        /** Lets the thread run without holding it again. */
        synchronized void runFreely() {
            until = Long.MAX_VALUE;
            notifyAll();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void eachCallHasItsOwnBudgetCountedFromItsStart() throws Exception {
        CompletableFuture<String> first = deadlines.limit(new CompletableFuture<>());
        TimeUnit.MILLISECONDS.sleep(100);
        CompletableFuture<String> second = deadlines.limit(new CompletableFuture<>());

        // read on the thread that ends the first call, as it ends it: this test's thread may be held up meanwhile
        boolean secondDoneWhenFirstEnded =
                first.handle((answer, failure) -> second.isDone()).join();

        assertThat(secondDoneWhenFirstEnded)
                .as("a hundred milliseconds from its deadline")
                .isFalse();
        assertThat(second.handle((answer, failure) -> failure).join()).isInstanceOf(TimeoutException.class);
    }

    @Test
    void aCallWhoseDeadlinePassedWhileThisProcessStalledKeepsTheAnswerReadRightAfter() throws Exception {
        CompletableFuture<String> call = onVirtualTime.limit(new CompletableFuture<>());

        virtualTime.stallNextPark(Duration.ofMillis(300)); // nothing of the process runs: the deadline passes meanwhile
        virtualTime.runUntil(305); // the reader of the store's answers resumes too, and reads it
        assertThat(call).as("its deadline moved by the stall").isNotDone();
        call.complete("answer");

        assertThat(call.join()).isEqualTo("answer");
    }

    @Test
    void aCallStillUnansweredAfterAStallIsEndedAtMostOneBudgetLater() {
        CompletableFuture<Long> endedAt = virtualMillisWhenTimedOut(onVirtualTime.limit(new CompletableFuture<>()));

        virtualTime.stallNextPark(Duration.ofMillis(300));
        virtualTime.runFreely();

        assertThat(endedAt.join())
                .as("its deadline moved by the stall, at most one budget: 400 ms after it started")
                .isEqualTo(400L);
    }

    @Test
    void callsFromManyThreadsAreAllEndedAfterAnIdlePause() throws Exception {
        deadlines
                .limit(new CompletableFuture<>())
                .handle((answer, failure) -> failure)
                .join();
        TimeUnit.MILLISECONDS.sleep(50); // the thread is parked with nothing to wait for
        ExecutorService threads = Executors.newFixedThreadPool(8);
        List<CompletableFuture<Object>> calls = new ArrayList<>();
        try {
            List<CompletableFuture<CompletableFuture<Object>>> started = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                int n = i;
                started.add(CompletableFuture.supplyAsync(
                        () -> {
                            CompletableFuture<Object> call = deadlines.limit(new CompletableFuture<>());
                            if (n % 2 == 0) {
                                call.complete(n);
                            }
                            return call;
                        },
                        threads));
            }
            started.forEach(call -> calls.add(call.join()));
        } finally {
            threads.shutdown();
        }

        for (int i = 0; i < calls.size(); i++) {
            Object outcome = calls.get(i)
                    .handle((answer, failure) -> failure != null ? failure : answer)
                    .join();
            if (i % 2 == 0) {
                assertThat(outcome).isEqualTo(i);
            } else {
                assertThat(outcome).isInstanceOf(TimeoutException.class);
            }
        }
    }
}
