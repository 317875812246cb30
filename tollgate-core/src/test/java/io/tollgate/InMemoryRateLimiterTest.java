package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.fixtures.SteppingTimeSource;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class InMemoryRateLimiterTest {

    private static final Policy TEN_PER_SECOND = Policy.of("ten", Limit.of(10, Rate.perSecond(10)));

    private final ManualTimeSource time = new ManualTimeSource(1_000_000_000L);
    private final InMemoryRateLimiter limiter =
            InMemoryRateLimiter.builder().timeSource(time).build();

    @Test
    void aWarmUpDecidesOnPoliciesAndKeysOfItsOwnAndLeavesTheClientsBucketsAlone() {
        limiter.tryAcquire("alice", TEN_PER_SECOND, 4);

        boolean warm = limiter.warmUp(Duration.ofSeconds(30));

        assertThat(warm).isTrue();
        assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND).remaining()).isEqualTo(5);
        assertThat(limiter.estimatedKeyCount())
                .as("alice and a few warm-up keys")
                .isBetween(2L, 17L);
    }

    @Test
    void holdsSaysWhetherTheLimiterKeepsTheKeysBuckets() {
        boolean neverSeen = limiter.holds("alice", TEN_PER_SECOND);
        limiter.tryAcquire("alice", TEN_PER_SECOND);
        boolean used = limiter.holds("alice", TEN_PER_SECOND);
        limiter.reset("alice", TEN_PER_SECOND);
        boolean reset = limiter.holds("alice", TEN_PER_SECOND);

        assertThat(neverSeen).isFalse();
        assertThat(used).isTrue();
        assertThat(reset).isFalse();
    }

    @Test
    void aWarmUpWithNoTimeLeftSaysItIsNotWarm() {
        assertThat(limiter.warmUp(Duration.ZERO)).isFalse();
        assertThatThrownBy(() -> limiter.warmUp(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void allowsABurstUpToCapacity() {
        for (int i = 9; i >= 0; i--) {
            Decision decision = limiter.tryAcquire("alice", TEN_PER_SECOND);

            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(i);
            assertThat(decision.retryAfter()).isZero();
        }
    }

    @Test
    void deniesWhenBucketIsEmpty() {
        drain("alice", TEN_PER_SECOND);

        Decision decision = limiter.tryAcquire("alice", TEN_PER_SECOND);

        assertThat(decision.allowed()).isFalse();
        assertThat(decision.remaining()).isZero();
        assertThat(decision.retryAfter()).isEqualTo(Duration.ofMillis(100));
        assertThat(decision.resetAfter()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void refillsAtTheConfiguredRate() {
        drain("alice", TEN_PER_SECOND);

        time.advance(Duration.ofMillis(350));

        assertThat(drain("alice", TEN_PER_SECOND)).isEqualTo(3);
    }

    @Test
    void neverHoldsMoreThanCapacity() {
        drain("alice", TEN_PER_SECOND);

        time.advance(Duration.ofHours(1));

        assertThat(drain("alice", TEN_PER_SECOND)).isEqualTo(10);
    }

    @Test
    void chargesTheCostOfARequest() {
        Decision first = limiter.tryAcquire("alice", TEN_PER_SECOND, 7);
        Decision second = limiter.tryAcquire("alice", TEN_PER_SECOND, 4);

        assertThat(first.allowed()).isTrue();
        assertThat(first.remaining()).isEqualTo(3);
        assertThat(second.allowed()).isFalse();
        assertThat(second.remaining()).isEqualTo(3);
        assertThat(second.retryAfter()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void aRefundGivesTokensBackUpToCapacity() {
        limiter.tryAcquire("alice", TEN_PER_SECOND, 7);

        limiter.refundAsync("alice", TEN_PER_SECOND, 5).toCompletableFuture().join();

        assertThat(limiter.inspect("alice", TEN_PER_SECOND).tokens()).isEqualTo(8);
        limiter.refundAsync("alice", TEN_PER_SECOND, 10).toCompletableFuture().join();
        assertThat(limiter.inspect("alice", TEN_PER_SECOND).tokens())
                .as("never more than capacity")
                .isEqualTo(10);
        assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND, 10).allowed()).isTrue();
        assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND).allowed()).isFalse();
        assertThatThrownBy(() -> limiter.refundAsync("alice", TEN_PER_SECOND, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cost");
    }

    @Test
    void aChargeBeyondWhatTheBucketHoldsLeavesItInDebtAndLaterRequestsWaitItOut() {
        Policy owing = TEN_PER_SECOND.withMaxDebt(Duration.ofSeconds(5)); // up to 50 tokens of debt
        limiter.tryAcquire("bob", owing, 4);

        BucketState after = limiter.charge("bob", owing, 25); // 6 left: 19 tokens of debt
        Decision refused = limiter.tryAcquire("bob", owing);
        time.advance(Duration.ofMillis(1_999));
        Decision stillRefused = limiter.tryAcquire("bob", owing);
        time.advance(Duration.ofMillis(1));
        Decision allowed = limiter.tryAcquire("bob", owing);

        assertThat(after.tokens()).isZero();
        assertThat(after.untilFull()).isEqualTo(Duration.ofMillis(2_900)); // 29 tokens short, 10 a second
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofSeconds(2)); // the debt, then one token
        assertThat(stillRefused.allowed()).isFalse();
        assertThat(allowed.allowed()).isTrue();
    }

    @Test
    void aChargeTakesABucketNoDeeperThanItsPolicysMaxDebt() {
        // by default a bucket may owe one bucket more: here 10 tokens, a second of refill
        BucketState after = limiter.charge("mallory", TEN_PER_SECOND, 100_000);
        Decision refused = limiter.tryAcquire("mallory", TEN_PER_SECOND);
        BucketState again = limiter.charge("mallory", TEN_PER_SECOND, 100_000);

        assertThat(TEN_PER_SECOND.maxDebt()).isEqualTo(Duration.ofSeconds(1));
        assertThat(after.untilFull()).isEqualTo(Duration.ofSeconds(2)); // the fill, and the debt's second
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(1_100)); // the debt, then one token
        assertThat(again).as("a bucket at its maximum debt takes no more").isEqualTo(after);
    }

    @Test
    void aMaxDebtOfZeroEmptiesABucketButNeverTakesItBelow() {
        Policy noDebt = TEN_PER_SECOND.withMaxDebt(Duration.ZERO);

        BucketState after = limiter.charge("erin", noDebt, 25);

        assertThat(after.tokens()).isZero();
        assertThat(after.untilFull()).isEqualTo(Duration.ofSeconds(1));
        assertThat(limiter.tryAcquire("erin", noDebt).retryAfter()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void aBucketDeeperThanALaterMaxDebtKeepsItsDebtAndTakesNoMore() {
        limiter.charge("frank", TEN_PER_SECOND.withMaxDebt(Duration.ofSeconds(10)), 60); // 5 s of debt

        BucketState after = limiter.charge("frank", TEN_PER_SECOND, 10); // now 1 s at most

        assertThat(after.untilFull()).isEqualTo(Duration.ofSeconds(6));
    }

    @Test
    void aChargeCanBeGivenBackInRefundsLargeOrSmall() {
        limiter.charge("carol", TEN_PER_SECOND, 30);
        limiter.charge("dave", TEN_PER_SECOND, 30);

        limiter.refundAsync("carol", TEN_PER_SECOND, 30).toCompletableFuture().join();
        limiter.refundAsync("dave", TEN_PER_SECOND, 10).toCompletableFuture().join();
        limiter.refundAsync("dave", TEN_PER_SECOND, 10).toCompletableFuture().join();
        limiter.refundAsync("dave", TEN_PER_SECOND, 10).toCompletableFuture().join();

        assertThat(limiter.inspect("carol", TEN_PER_SECOND).tokens()).isEqualTo(10);
        assertThat(limiter.inspect("dave", TEN_PER_SECOND).tokens()).isEqualTo(10);
    }

    @Test
    void aChargeOutOfRangeIsRefusedNamingTheLargest() {
        Policy fine = Policy.of("fine", Limit.of(1_000, Rate.perSecond(1_000)));

        assertThatThrownBy(() -> limiter.charge("dave", fine, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cost must be at least 1, was 0");
        assertThatThrownBy(() -> limiter.charge("dave", fine, Long.MAX_VALUE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "cost 9223372036854775807 exceeds the largest charge policy 'fine' can" + " count exactly (");
        assertThatThrownBy(() -> limiter.charge("", fine, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRefundGivesBackToEveryLimitOfAPolicy() {
        Policy twoLimits = Policy.of("two", Limit.of(10, Rate.perSecond(10)), Limit.of(100, Rate.perHour(100)));
        limiter.tryAcquire("bob", twoLimits, 6);

        limiter.refundAsync("bob", twoLimits, 6).toCompletableFuture().join();

        assertThat(limiter.inspect("bob", twoLimits).limits())
                .extracting(BucketState.LimitState::tokens)
                .containsExactly(10L, 100L);
    }

    @Test
    void resetAfterIsTheTimeUntilTheBucketIsFull() {
        Decision decision = limiter.tryAcquire("alice", TEN_PER_SECOND, 3);

        assertThat(decision.resetAfter()).isEqualTo(Duration.ofMillis(300));
    }

    @Test
    void keysHaveSeparateBuckets() {
        drain("alice", TEN_PER_SECOND);

        assertThat(limiter.tryAcquire("bob", TEN_PER_SECOND).allowed()).isTrue();
    }

    @Test
    void policiesHaveSeparateBucketsForTheSameKey() {
        Policy other = Policy.of("other", Limit.of(10, Rate.perSecond(10)));
        drain("alice", TEN_PER_SECOND);

        assertThat(limiter.tryAcquire("alice", other).allowed()).isTrue();
    }

    @Test
    void equalPoliciesShareBuckets() {
        Policy sameAgain = Policy.of("ten", Limit.of(10, Rate.of(20, Duration.ofSeconds(2))));
        drain("alice", TEN_PER_SECOND);

        assertThat(limiter.tryAcquire("alice", sameAgain).allowed()).isFalse();
    }

    @Test
    void acceptsKeysOfAnyCharacters() {
        String key = "ключ\u0000\n\t🔑" + "x".repeat(10_000);

        assertThat(limiter.tryAcquire(key, TEN_PER_SECOND).remaining()).isEqualTo(9);
        assertThat(limiter.tryAcquire(key, TEN_PER_SECOND).remaining()).isEqualTo(8);
    }

    @Nested
    class PolicyWithSeveralLimits {

        private final Policy burstAndQuota =
                Policy.of("api", Limit.of(5, Rate.perSecond(5)), Limit.of(8, Rate.perHour(8)));

        @Test
        void passesOnlyWhileEveryLimitHasTokens() {
            assertThat(drain("alice", burstAndQuota)).isEqualTo(5);

            time.advance(Duration.ofSeconds(1));

            assertThat(drain("alice", burstAndQuota)).isEqualTo(3);
        }

        @Test
        void aRequestThatOneLimitRefusesChargesNoLimit() {
            limiter.tryAcquire("alice", burstAndQuota, 4);
            time.advance(Duration.ofSeconds(1)); // burst full again (5), quota at 4

            Decision refused = limiter.tryAcquire("alice", burstAndQuota, 5);
            Decision allowed = limiter.tryAcquire("alice", burstAndQuota, 4);

            assertThat(refused.allowed()).isFalse();
            assertThat(allowed.allowed()).isTrue();
        }

        @Test
        void aRefusalReportsTheLimitThatRefused() {
            limiter.tryAcquire("alice", burstAndQuota, 4);
            time.advance(Duration.ofSeconds(1));

            Decision refused = limiter.tryAcquire("alice", burstAndQuota, 5);

            assertThat(refused.limitIndex()).isEqualTo(1);
            assertThat(refused.limit()).isEqualTo(burstAndQuota.limits().get(1));
            assertThat(refused.remaining()).isEqualTo(4);
            assertThat(refused.retryAfter()).isEqualTo(Duration.ofMinutes(7).plusSeconds(29));
        }

        @Test
        void anAllowedRequestReportsTheLimitWithTheFewestTokensLeft() {
            Decision first = limiter.tryAcquire("alice", burstAndQuota, 1);
            time.advance(Duration.ofSeconds(1));
            limiter.tryAcquire("alice", burstAndQuota, 4);
            time.advance(Duration.ofSeconds(1));
            Decision later = limiter.tryAcquire("alice", burstAndQuota, 1);

            assertThat(first.limitIndex()).isZero();
            assertThat(first.remaining()).isEqualTo(4);
            assertThat(later.limitIndex()).isEqualTo(1);
            assertThat(later.remaining()).isEqualTo(2);
        }
    }

    @Nested
    class PolicyChange {

        @Test
        void aBucketKeepsTheTokensItSpentUpToTheNewCapacity() {
            limiter.tryAcquire("alice", TEN_PER_SECOND, 4);
            Policy smaller = Policy.of("ten", Limit.of(3, Rate.perSecond(1)));
            Policy larger = Policy.of("ten", Limit.of(100, Rate.perSecond(1)));

            assertThat(limiter.tryAcquire("alice", larger).remaining()).isEqualTo(95);
            Decision shrunk = limiter.tryAcquire("alice", smaller);
            assertThat(shrunk.allowed())
                    .as("5 spent: all 3 of the new capacity")
                    .isFalse();
            assertThat(shrunk.remaining()).isZero();
        }

        @Test
        void aLimitThatIsNewStartsFull() {
            drain("alice", TEN_PER_SECOND);
            Policy withQuota = Policy.of("ten", Limit.of(10, Rate.perSecond(10)), Limit.of(1_000, Rate.perDay(1_000)));
            time.advance(Duration.ofMillis(100));

            Decision decision = limiter.tryAcquire("alice", withQuota);

            assertThat(decision.allowed()).isTrue();
            assertThat(decision.limitIndex()).isZero();
            assertThat(limiter.tryAcquire("alice", withQuota).allowed()).isFalse();
        }

        @Test
        void aFullBucketStaysFullAsNoBucketWouldSoSweepingChangesNothing() {
            Policy one = Policy.of("grow", Limit.of(1, Rate.perSecond(1)));
            Policy two = Policy.of("grow", Limit.of(2, Rate.perSecond(1)));
            Bucket held = Bucket.fresh(one, 0);
            held.tryAcquire(0, 1);

            Decision converted = held.successor(two, 1_000_000).tryAcquire(1_000_000, 1); // full again by then
            Decision fresh = Bucket.fresh(two, 1_000_000).tryAcquire(1_000_000, 1); // as if swept away

            assertThat(converted).isEqualTo(fresh);
            assertThat(converted.remaining()).isEqualTo(1);
        }
    }

    @Nested
    class BadArguments {

        @Test
        void rejectsAnEmptyKey() {
            assertThatThrownBy(() -> limiter.tryAcquire("", TEN_PER_SECOND))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("key must not be empty");
        }

        @Test
        void rejectsANullKeyOrPolicy() {
            assertThatThrownBy(() -> limiter.tryAcquire(null, TEN_PER_SECOND))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("key");
            assertThatThrownBy(() -> limiter.tryAcquire("alice", null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("policy");
        }

        @Test
        void rejectsACostBelowOne() {
            assertThatThrownBy(() -> limiter.tryAcquire("alice", TEN_PER_SECOND, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("cost must be at least 1, was 0");
            assertThatThrownBy(() -> limiter.tryAcquire("alice", TEN_PER_SECOND, -2))
                    .hasMessage("cost must be at least 1, was -2");
        }

        @Test
        void rejectsACostAboveTheSmallestCapacity() {
            assertThatThrownBy(() -> limiter.tryAcquire("alice", TEN_PER_SECOND, 11))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost 11 exceeds the smallest capacity (10) of policy 'ten'");
        }

        @Test
        void theAsynchronousFormThrowsDirectly() {
            assertThatThrownBy(() -> limiter.tryAcquireAsync("", TEN_PER_SECOND, 1))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> limiter.tryAcquireAsync("alice", TEN_PER_SECOND, 0))
                    .isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void acquireRejectsANegativeOrNullWait() {
            assertThatThrownBy(() -> limiter.acquire("alice", TEN_PER_SECOND, 1, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("maxWait must not be negative, was PT-0.001S");
            assertThatThrownBy(() -> limiter.acquire("alice", TEN_PER_SECOND, 1, null))
                    .isInstanceOf(NullPointerException.class);
        }

        @Test
        void aRejectedCallTakesNothing() {
            assertThatThrownBy(() -> limiter.tryAcquire("alice", TEN_PER_SECOND, 11));

            assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND, 10).allowed())
                    .isTrue();
        }
    }

    @Test
    void theAsynchronousFormCompletesWithTheDecision() throws Exception {
        CompletableFuture<Decision> stage =
                limiter.tryAcquireAsync("alice", TEN_PER_SECOND, 3).toCompletableFuture();

        assertThat(stage.get(1, TimeUnit.SECONDS).remaining()).isEqualTo(7);
    }

    @Nested
    @Timeout(10)
    class AcquireWithWait {

        private final ExecutorService threads = Executors.newCachedThreadPool();

        @AfterEach
        void stopThreads() {
            threads.shutdownNow();
        }

        @Test
        void returnsAtOnceWhenTheTokensAreThere() throws InterruptedException {
            assertThat(limiter.acquire("alice", TEN_PER_SECOND, 10, Duration.ZERO))
                    .isTrue();
            assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND).allowed()).isFalse();
        }

        @Test
        void waitsForTokensThatComeWithinTheMaximumWait() throws Exception {
            drain("alice", TEN_PER_SECOND);

            Future<Boolean> acquired =
                    threads.submit(() -> limiter.acquire("alice", TEN_PER_SECOND, 2, Duration.ofSeconds(1)));
            assertThat(time.awaitSleepers(1, Duration.ofSeconds(5))).isTrue();
            time.advance(Duration.ofMillis(199));
            assertThat(acquired.isDone()).isFalse();
            time.advance(Duration.ofMillis(1));

            assertThat(acquired.get(5, TimeUnit.SECONDS)).isTrue();
        }

        @Test
        void returnsFalseWithoutWaitingWhenTheWaitWouldExceedTheMaximum() throws InterruptedException {
            drain("alice", TEN_PER_SECOND);

            boolean acquired = limiter.acquire("alice", TEN_PER_SECOND, 2, Duration.ofMillis(199));

            assertThat(acquired).isFalse();
            time.advance(Duration.ofMillis(200));
            assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND, 2).allowed())
                    .as("a refused acquire takes nothing")
                    .isTrue();
        }

        @Test
        void waitingCallersAreServedInTheOrderTheyAsked() throws Exception {
            drain("alice", TEN_PER_SECOND);

            Future<Boolean> first =
                    threads.submit(() -> limiter.acquire("alice", TEN_PER_SECOND, 1, Duration.ofSeconds(1)));
            assertThat(time.awaitSleepers(1, Duration.ofSeconds(5))).isTrue();
            Future<Boolean> second =
                    threads.submit(() -> limiter.acquire("alice", TEN_PER_SECOND, 1, Duration.ofSeconds(1)));
            assertThat(time.awaitSleepers(2, Duration.ofSeconds(5))).isTrue();
            time.advance(Duration.ofMillis(100));

            assertThat(first.get(5, TimeUnit.SECONDS)).isTrue();
            assertThat(second.isDone()).isFalse();
            assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND).allowed())
                    .as("the token due at 200 ms is reserved")
                    .isFalse();
            time.advance(Duration.ofMillis(100));
            assertThat(second.get(5, TimeUnit.SECONDS)).isTrue();
        }

        @Test
        void isInterruptible() throws Exception {
            drain("alice", TEN_PER_SECOND);
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                try {
                    outcome.complete(new AssertionError(
                            "returned " + limiter.acquire("alice", TEN_PER_SECOND, 1, Duration.ofSeconds(1))));
                } catch (Throwable thrown) {
                    outcome.complete(thrown);
                }
            });
            waiter.start();
            assertThat(time.awaitSleepers(1, Duration.ofSeconds(5))).isTrue();

            waiter.interrupt();

            assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        }

        @Test
        void reservesNoFurtherThanExactArithmeticAllows() throws InterruptedException {
            Policy huge = Policy.of("huge", Limit.of(1L << 52, Rate.perSecond(1_000_000)));
            SteppingTimeSource stepping = new SteppingTimeSource(0);
            InMemoryRateLimiter limiter =
                    InMemoryRateLimiter.builder().timeSource(stepping).build();

            assertThat(limiter.acquire("k", huge, 1L << 52, Duration.ofDays(365_000)))
                    .isTrue();
            assertThat(limiter.acquire("k", huge, 1L << 52, Duration.ofDays(365_000_000)))
                    .isFalse();
        }
    }

    @Nested
    class Memory {

        @Test
        void keepsAHugeKeyAsItsDigestSoThatNoClientMakesABucketCostKilobytes() {
            String huge = "k".repeat(8_000);

            for (int i = 0; i < 100; i++) {
                limiter.tryAcquire(huge + i, TEN_PER_SECOND, 1);
            }
            Decision again = limiter.tryAcquire(huge + 0, TEN_PER_SECOND, 10);

            assertThat(limiter.keyCharacters()).isLessThanOrEqualTo(100 * 50);
            assertThat(again.allowed())
                    .as("the same huge key is the same bucket")
                    .isFalse();
            assertThat(limiter.inspect(huge + 0, TEN_PER_SECOND).limits().get(0).tokens())
                    .isEqualTo(9);
        }

        @Test
        void dropsAnIdleKeyOnceItsBucketIsFullAgain() {
            limiter.tryAcquire("alice", TEN_PER_SECOND, 10);

            time.advance(Duration.ofMillis(999)); // full at 1 s
            limiter.cleanUp();
            long keptWhileBelowFull = limiter.estimatedKeyCount();
            time.advance(Duration.ofMillis(1));
            limiter.cleanUp();

            assertThat(keptWhileBelowFull).isEqualTo(1);
            assertThat(limiter.estimatedKeyCount()).isZero();
        }

        @Test
        void theThreadsThatUseTheLimiterSweepIdleKeysAway() {
            for (int i = 0; i < 10_000; i++) {
                limiter.tryAcquire("client-" + i, TEN_PER_SECOND);
            }

            time.advance(Duration.ofSeconds(2));
            for (int slice = 0; slice < 5; slice++) {
                limiter.tryAcquire("bob", TEN_PER_SECOND);
                time.advance(Duration.ofMillis(10));
            }

            assertThat(limiter.estimatedKeyCount()).isEqualTo(1);
        }

        @Test
        void keepsAKeyWhoseWaitingCallersPushedItBelowEmpty() throws InterruptedException {
            Policy slow = Policy.of("slow", Limit.of(2, Rate.perHour(1)));
            SteppingTimeSource stepping = new SteppingTimeSource(0);
            InMemoryRateLimiter limiter =
                    InMemoryRateLimiter.builder().timeSource(stepping).build();
            limiter.tryAcquire("alice", slow, 2); // empty: full again at 2 h
            limiter.acquire("alice", slow, 2, Duration.ofHours(2)); // sleeps to 2 h; full again at 4 h

            stepping.advanceMicros(Duration.ofHours(2).minusSeconds(1).toNanos() / 1_000);
            limiter.cleanUp();
            Decision oneSecondBeforeFull = limiter.tryAcquire("alice", slow, 2);
            stepping.advanceMicros(1_000_000);
            Decision whenFull = limiter.tryAcquire("alice", slow, 2);

            assertThat(oneSecondBeforeFull.allowed()).isFalse();
            assertThat(oneSecondBeforeFull.retryAfter()).isEqualTo(Duration.ofSeconds(1));
            assertThat(whenFull.allowed()).isTrue();
        }

        @Test
        void holdsNoMoreKeysThanItsMaximum() {
            InMemoryRateLimiter bounded = InMemoryRateLimiter.builder()
                    .timeSource(time)
                    .maximumKeys(100)
                    .build();

            for (int i = 0; i < 20_000; i++) {
                bounded.tryAcquire("random-" + i, TEN_PER_SECOND);
            }
            bounded.cleanUp();

            assertThat(bounded.estimatedKeyCount()).isLessThanOrEqualTo(100);
        }

        @Test
        void rejectsAMaximumBelowOne() {
            assertThatThrownBy(() -> InMemoryRateLimiter.builder().maximumKeys(0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("maximumKeys must be at least 1, was 0");
        }
    }

    /** Takes tokens one at a time until refused; returns how many were taken. */
    private int drain(String key, Policy policy) {
        int taken = 0;
        while (limiter.tryAcquire(key, policy).allowed()) {
            taken++;
        }
        return taken;
    }
}
