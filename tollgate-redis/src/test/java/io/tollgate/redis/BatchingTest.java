package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Batching against a real redis-server that the tests freeze (SIGSTOP), so that requests pile up and
 * travel together, and kill: what one script call decides, and what happens to its callers when it fails.
 */
@Timeout(60)
@Isolated // its bounds on batches and their timing need the machine to itself
class BatchingTest {

    private static final Policy TEN = Policy.of("ten", Limit.of(10, Rate.perHour(10)));

    private RedisServer server;

    @BeforeEach
    void start() {
        server = RedisServer.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void manyRequestsForOneHotKeyAreDecidedInAFewScriptCallsAndAdmitExactlyTheCapacity() throws Exception {
        try (RedisRateLimiter limiter = limiter(Duration.ofSeconds(5), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN); // connected, scripts cached
            long callsBefore = scriptCalls();

            server.pause();
            List<CompletableFuture<Decision>> burst = submit(limiter, "hot", 200);
            TimeUnit.MILLISECONDS.sleep(200);
            server.resume();

            List<Decision> decisions = join(burst);
            assertThat(decisions).noneMatch(Decision::degraded);
            assertThat(decisions.stream().filter(Decision::allowed)).hasSize(10);
            assertThat(decisions.subList(0, 10)).allMatch(Decision::allowed); // in arrival order
            assertThat(decisions.get(9).remaining()).isZero();
            assertThat(scriptCalls() - callsBefore)
                    .as("script calls for 200 requests")
                    .isLessThanOrEqualTo(DecisionBatcher.MAX_IN_FLIGHT + 1);
        }
    }

    @Test
    void answersThatArriveInTimeAreRedisAnswersEvenWhenTheirCallersTakeLongerThanTheBudgetToRun() throws Exception {
        try (RedisRateLimiter limiter = limiter(Duration.ofMillis(200), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN);

            // One reply answers the burst's requests; each caller then runs for 12 ms on the thread that
            // delivers the answers, so the last are delivered about 290 ms after they were sent
            server.pause();
            List<CompletableFuture<Decision>> burst = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                burst.add(limiter.tryAcquireAsync("hot", TEN, 1)
                        .toCompletableFuture()
                        .whenComplete((decision, failure) -> sleepMillis(12)));
            }
            TimeUnit.MILLISECONDS.sleep(50);
            server.resume();

            List<Decision> decisions = join(burst);
            assertThat(decisions).noneMatch(Decision::degraded);
            assertThat(decisions.stream().filter(Decision::allowed)).hasSize(10);
        }
    }

    @Test
    void aRequestWrittenAndReadByAnEventLoopHeldUpPastItsBudgetGetsRedisAnswer() throws Exception {
        try (RedisRateLimiter limiter = limiter(Duration.ofMillis(100), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN);

            // The first answer's caller holds Lettuce's event loop for 160 ms: the second request, sent meanwhile
            // from another thread, is written and its reply read only after that, past its 100 ms budget. Redis is
            // frozen until the caller is in place, so that the answer is delivered on the loop, not on this thread.
            CountDownLatch held = new CountDownLatch(1);
            server.pause();
            CompletableFuture<Decision> first = limiter.tryAcquireAsync("first", TEN, 1)
                    .toCompletableFuture()
                    .whenComplete((decision, failure) -> {
                        held.countDown();
                        sleepMillis(160);
                    });
            server.resume();
            assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
            Decision second = limiter.tryAcquire("second", TEN);

            assertThat(first.join().degraded()).isFalse();
            assertThat(second.degraded())
                    .as("Redis answered at once; this process's event loop was late, not Redis")
                    .isFalse();
            assertThat(second.allowed()).isTrue();
        }
    }

    @Test
    void aRequestWrittenLateByAHeldUpEventLoopIsGivenRedisTime() throws Exception {
        try (RedisRateLimiter limiter = limiter(Duration.ofMillis(100), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN);

            // The first answer's caller holds Lettuce's event loop until 90 ms after the second request was handed to
            // it, then freezes Redis for 50 ms: the loop writes the request 10 ms before its budget runs out, and is
            // free when the budget asks it; Redis answers 40 ms past the budget.
            CountDownLatch held = new CountDownLatch(1);
            CompletableFuture<Long> secondHandedOver = new CompletableFuture<>();
            server.pause();
            CompletableFuture<Decision> first = limiter.tryAcquireAsync("first", TEN, 1)
                    .toCompletableFuture()
                    .whenComplete((decision, failure) -> {
                        held.countDown();
                        long handedOver = secondHandedOver.join();
                        sleepUntil(handedOver + TimeUnit.MILLISECONDS.toNanos(90));
                        server.pause();
                        CompletableFuture.runAsync(() -> {
                            sleepUntil(handedOver + TimeUnit.MILLISECONDS.toNanos(140));
                            server.resume();
                        });
                    });
            server.resume();
            assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
            secondHandedOver.complete(System.nanoTime());
            Decision second = limiter.tryAcquire("second", TEN);

            assertThat(first.join().degraded()).isFalse();
            assertThat(second.degraded())
                    .as(
                            "written 10 ms before its budget ran out: Redis had not had its time (%s)",
                            second.degradation())
                    .isFalse();
            assertThat(second.allowed()).isTrue();
        }
    }

    @Test
    void aReplyWaitingUnreadWhileTheEventLoopRunsTasksIsRedisAnswer() throws Exception {
        try (RedisRateLimiter limiter = limiter(Duration.ofMillis(100), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN);
            // Redis is frozen until the caller is in place, so that the answer is delivered on Lettuce's event loop
            CompletableFuture<EventExecutor> loopOfAnswers = new CompletableFuture<>();
            server.pause();
            CompletableFuture<Decision> first = limiter.tryAcquireAsync("first", TEN, 1)
                    .toCompletableFuture()
                    .whenComplete((decision, failure) -> loopOfAnswers.complete(ThreadExecutorMap.currentExecutor()));
            server.resume();
            assertThat(first.join().degraded()).isFalse();
            SingleThreadEventExecutor loop = (SingleThreadEventExecutor) loopOfAnswers.join();
            // The budget has asked the loop once before (a call that a frozen Redis left unanswered), so that what
            // it runs for that is loaded and linked, and the loop runs it at once
            server.pause();
            assertThat(limiter.tryAcquire("unanswered", TEN).degraded()).isTrue();
            server.resume();
            TimeUnit.MILLISECONDS.sleep(100);

            // The second request is written to a frozen Redis; then a task of the loop thaws Redis, whose reply waits
            // unread in the socket while the task runs on, until the budget asks the loop, just after that
            server.pause();
            CompletableFuture<Decision> second =
                    limiter.tryAcquireAsync("second", TEN, 1).toCompletableFuture();
            loop.execute(() -> {
                server.resume();
                long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                while (loop.pendingTasks() == 0 && System.nanoTime() < giveUp) {
                    Thread.onSpinWait();
                }
            });

            assertThat(second.join().degraded())
                    .as("Redis's reply was in the socket when the budget ran out; the loop had not read it yet")
                    .isFalse();
        }
    }

    @Test
    void aBurstOnAHotKeyLeavesItsRefusalInTheDenyCache() throws Exception {
        try (RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(server.uri())
                .timeout(Duration.ofSeconds(5))
                .batching(true)
                .build()) {
            limiter.tryAcquire("warm-up", TEN);

            server.pause();
            List<CompletableFuture<Decision>> burst = submit(limiter, "hot", 200);
            TimeUnit.MILLISECONDS.sleep(200);
            server.resume();
            List<Decision> decisions = join(burst);
            long callsAfterBurst = scriptCalls();
            Decision next = limiter.tryAcquire("hot", TEN);

            assertThat(decisions.get(199).allowed()).isFalse();
            assertThat(next.allowed()).isFalse();
            assertThat(next.retryAfterMicros()).isPositive();
            assertThat(scriptCalls()).as("script calls after the burst").isEqualTo(callsAfterBurst);
        }
    }

    @Test
    void aBatchGoesAtOnceWhenNoneIsOnItsWay() {
        assertThat(DecisionBatcher.mayStart(0, 0, 1)).isTrue();
    }

    @Test
    void aSecondBatchGoesOnceAsManyWaitAsTheOneOnItsWayCarries() {
        assertThat(DecisionBatcher.mayStart(1, 40, 39))
                .as("fewer wait: they wait for it")
                .isFalse();
        assertThat(DecisionBatcher.mayStart(1, 40, 40)).isTrue();
        assertThat(DecisionBatcher.mayStart(1, DecisionBatcher.MAX_BATCH, DecisionBatcher.MAX_BATCH))
                .as("a full batch behind a full one")
                .isTrue();
    }

    @Test
    void noMoreThanTwoBatchesAreOnTheirWay() {
        assertThat(DecisionBatcher.mayStart(DecisionBatcher.MAX_IN_FLIGHT, 2, DecisionBatcher.MAX_BATCH))
                .isFalse();
    }

    @Test
    @EnabledOnOs(OS.LINUX) // reads the kernel's table of TCP sockets
    void aLoneRequestGoesBesideALoneBatchOnItsWayAndTheRestWaitForThem() throws Exception {
        try (RedisRateLimiter limiter = limiter(Duration.ofSeconds(5), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN);
            long callsBefore = scriptCalls();

            // A stopped Redis reads nothing: what the limiter writes meanwhile waits in Redis's socket
            server.pause();
            List<CompletableFuture<Decision>> burst = new ArrayList<>(submit(limiter, "hot", 1));
            TimeUnit.MILLISECONDS.sleep(50);
            long firstBatch = bytesWaitingForRedis();
            burst.addAll(submit(limiter, "hot", 1));
            TimeUnit.MILLISECONDS.sleep(50);
            long secondBatch = bytesWaitingForRedis();
            burst.addAll(submit(limiter, "hot", 98));
            TimeUnit.MILLISECONDS.sleep(100);
            long afterTheRest = bytesWaitingForRedis();
            server.resume();

            assertThat(join(burst)).noneMatch(Decision::degraded);
            assertThat(secondBatch)
                    .as("as many wait as the batch on its way carries: they go, and Redis has work while it replies")
                    .isGreaterThan(firstBatch);
            assertThat(afterTheRest)
                    .as("no third batch while two are on their way")
                    .isEqualTo(secondBatch);
            assertThat(scriptCalls() - callsBefore)
                    .as("script calls for 100 requests: the two lone ones, then the 98 as one")
                    .isEqualTo(3);
        }
    }

    @Test
    void manyKeysShareAScriptCall() throws Exception {
        try (RedisRateLimiter limiter = limiter(Duration.ofSeconds(5), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN);
            long callsBefore = scriptCalls();

            server.pause();
            List<CompletableFuture<Decision>> burst = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                burst.add(limiter.tryAcquireAsync("key-" + i, TEN, 3).toCompletableFuture());
            }
            TimeUnit.MILLISECONDS.sleep(200);
            server.resume();

            assertThat(join(burst)).allSatisfy(decision -> {
                assertThat(decision.allowed()).isTrue();
                assertThat(decision.remaining()).isEqualTo(7);
            });
            assertThat(scriptCalls() - callsBefore).isLessThanOrEqualTo(DecisionBatcher.MAX_IN_FLIGHT + 1);
            assertThat(StoredKeys.count(server)).isEqualTo(101);
        }
    }

    @Test
    void aKeyOfAnotherTypeFailsOnlyItsOwnDecisionInTheBatch() throws Exception {
        server.command("RPUSH", "tollgate:ten:not-a-bucket", "x");
        try (RedisRateLimiter limiter = limiter(Duration.ofSeconds(5), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN);

            server.pause();
            CompletableFuture<Decision> before =
                    limiter.tryAcquireAsync("good-1", TEN, 1).toCompletableFuture();
            CompletableFuture<Decision> second =
                    limiter.tryAcquireAsync("good-2", TEN, 1).toCompletableFuture();
            CompletableFuture<Decision> bad =
                    limiter.tryAcquireAsync("not-a-bucket", TEN, 1).toCompletableFuture();
            CompletableFuture<Decision> after =
                    limiter.tryAcquireAsync("good-3", TEN, 1).toCompletableFuture();
            TimeUnit.MILLISECONDS.sleep(200);
            server.resume();

            assertThat(List.of(before.join(), second.join(), after.join())).allSatisfy(decision -> {
                assertThat(decision.degraded()).isFalse();
                assertThat(decision.remaining()).isEqualTo(9);
            });
            Decision refused = bad.join();
            assertThat(refused.degraded()).isTrue();
            assertThat(refused.degradation().cause()).isEqualTo(Degradation.Cause.ERROR_REPLY);
            assertThat(refused.degradation().detail()).contains("WRONGTYPE", "not-a-bucket");
            assertThat(refused.allowed()).isFalse();
        }
    }

    @Test
    void anotherProgramsStringFailsOnlyItsOwnDecisionsAndIsLeftAlone() throws Exception {
        server.command("SET", "tollgate:ten:foreign", "1700000000000000|10,1,1|oops");
        try (RedisRateLimiter limiter = limiter(Duration.ofSeconds(5), FailurePolicy.DENY)) {
            limiter.tryAcquire("warm-up", TEN);

            server.pause();
            CompletableFuture<Decision> good =
                    limiter.tryAcquireAsync("good", TEN, 1).toCompletableFuture();
            List<CompletableFuture<Decision>> foreign = submit(limiter, "foreign", 3);
            CompletableFuture<Decision> after =
                    limiter.tryAcquireAsync("good", TEN, 2).toCompletableFuture();
            TimeUnit.MILLISECONDS.sleep(200);
            server.resume();

            assertThat(good.join().remaining()).isEqualTo(9);
            assertThat(after.join().remaining()).isEqualTo(7);
            assertThat(join(foreign)).allSatisfy(decision -> {
                assertThat(decision.degradation().cause()).isEqualTo(Degradation.Cause.ERROR_REPLY);
                assertThat(decision.degradation().detail()).contains("not a Tollgate bucket", "foreign");
            });
            assertThat(server.command("GET", "tollgate:ten:foreign")).isEqualTo("1700000000000000|10,1,1|oops");
        }
    }

    @Test
    void everyCallerOfABatchThatIsLostIsAnsweredWithinTheBudget() throws Exception {
        Duration budget = Duration.ofMillis(300);
        try (RedisRateLimiter limiter = limiter(budget, FailurePolicy.ALLOW)) {
            limiter.tryAcquire("warm-up", TEN);

            server.pause();
            long start = System.nanoTime();
            List<CompletableFuture<Decision>> lost = submit(limiter, "doomed", 100);
            server.kill();
            List<Decision> decisions = join(lost);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(decisions).hasSize(100).allSatisfy(decision -> {
                assertThat(decision.degraded()).isTrue();
                assertThat(decision.allowed()).as("failing open").isTrue();
            });
            assertThat(tookMillis).as("all answered, ms").isLessThan(budget.toMillis() + 2_000);
        }
    }

    private RedisRateLimiter limiter(Duration budget, FailurePolicy onFailure) {
        return RedisRateLimiter.builder()
                .uri(server.uri())
                .timeout(budget)
                .failurePolicy(onFailure)
                .denyCache(0)
                .batching(true)
                .build();
    }

    private static List<CompletableFuture<Decision>> submit(RedisRateLimiter limiter, String key, int count) {
        List<CompletableFuture<Decision>> futures = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            futures.add(limiter.tryAcquireAsync(key, TEN, 1).toCompletableFuture());
        }
        return futures;
    }

    private static void sleepUntil(long nanos) {
        for (long left = nanos - System.nanoTime(); left > 0; left = nanos - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private static void sleepMillis(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static List<Decision> join(List<CompletableFuture<Decision>> futures) {
        return futures.stream().map(CompletableFuture::join).toList();
    }

    /** Bytes that the test's Redis has received and not read yet, over all its connections (Linux only). */
    private long bytesWaitingForRedis() throws IOException {
        String local = String.format(":%04X", server.port());
        long waiting = 0;
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path path = Path.of(table);
            if (!Files.exists(path)) {
                continue;
            }
            List<String> rows = Files.readAllLines(path);
            for (String row : rows.subList(1, rows.size())) {
                // sl local_address rem_address st tx_queue:rx_queue ...; st 01 is ESTABLISHED
                String[] fields = row.trim().split("\\s+");
                if (fields[1].endsWith(local) && fields[3].equals("01")) {
                    waiting += Long.parseLong(fields[4].substring(fields[4].indexOf(':') + 1), 16);
                }
            }
        }
        return waiting;
    }

    private long scriptCalls() {
        return server.commandCalls("evalsha") + server.commandCalls("eval");
    }
}
