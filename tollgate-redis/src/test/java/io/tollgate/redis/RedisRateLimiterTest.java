package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.tollgate.BucketState;
import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.LimiterArguments;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.LoggedLines;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.guard.CircuitBreaker;
import io.tollgate.testing.FreePorts;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.TestDepth;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

@Isolated // it counts what the limiter logs, and bounds connection times
class RedisRateLimiterTest {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Policy TEN_PER_SECOND = Policy.of("ten", Limit.of(10, Rate.perSecond(10)));

    private final ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
    private RedisRateLimiter limiter;

    @BeforeEach
    void connect() {
        redis.server().command("FLUSHALL");
        limiter = RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .clientClock(time)
                .build();
    }

    @AfterEach
    void disconnect() {
        limiter.close();
    }

    @Test
    void allowsABurstUpToCapacityThenRefuses() {
        for (int i = 9; i >= 0; i--) {
            assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND).remaining()).isEqualTo(i);
        }

        Decision refused = limiter.tryAcquire("alice", TEN_PER_SECOND);

        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(100));
        assertThat(refused.resetAfter()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void refillsWithTheClockItIsGiven() {
        limiter.tryAcquire("alice", TEN_PER_SECOND, 10);

        time.advance(Duration.ofMillis(350));

        assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND, 3).allowed()).isTrue();
        assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND).allowed()).isFalse();
    }

    @Test
    void keepsAllLimitsOfAPolicyInOneKeyUnderThePrefix() {
        Policy policy = Policy.of("api", Limit.of(5, Rate.perSecond(5)), Limit.of(100, Rate.perHour(100)));

        limiter.tryAcquire("alice", policy, 2);

        assertThat(StoredKeys.of(redis.server())).isEqualTo(List.of("tollgate:api:alice"));
        assertThat(redis.server().command("GET", "tollgate:api:alice"))
                .as("time | limits as C,P,N | debt of each limit in ticks")
                .isEqualTo("1700000000000000|5,200000,1;100,36000000,1|400000|72000000");
    }

    @Test
    void aRefusedRequestWritesNothing() {
        limiter.tryAcquire("alice", TEN_PER_SECOND, 10);
        Object before = redis.server().command("GET", "tollgate:ten:alice");
        long writesBefore = redis.server().commandCalls("set");

        limiter.tryAcquire("alice", TEN_PER_SECOND);

        assertThat(redis.server().command("GET", "tollgate:ten:alice")).isEqualTo(before);
        assertThat(redis.server().commandCalls("set")).isEqualTo(writesBefore);
    }

    @Test
    void usesTheConfiguredKeyPrefix() {
        try (RedisRateLimiter prefixed = RedisRateLimiter.builder()
                .timeout(PATIENT)
                .uri(redis.server().uri())
                .keyPrefix("myapp:rl:")
                .build()) {
            prefixed.tryAcquire("alice", TEN_PER_SECOND);
        }

        assertThat(redis.server().command("EXISTS", "myapp:rl:ten:alice")).isEqualTo(1L);
    }

    @Nested
    class Keys {

        @Test
        void aNewKeyStartsFull() {
            assertThat(limiter.tryAcquire("fresh", TEN_PER_SECOND, 10).allowed())
                    .isTrue();
        }

        @Test
        void anExistingKeyContinuesWhereItWas() {
            limiter.tryAcquire("alice", TEN_PER_SECOND, 7);

            Decision decision = limiter.tryAcquire("alice", TEN_PER_SECOND, 3);

            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isZero();
        }

        @Test
        void expiresOnceTheBucketIsFullAgain() throws InterruptedException {
            try (RedisRateLimiter redisTime = RedisRateLimiter.builder()
                    .timeout(PATIENT)
                    .uri(redis.server().uri())
                    .build()) {
                redisTime.tryAcquire("alice", TEN_PER_SECOND, 2); // full again in 200 ms

                long ttl = (Long) redis.server().command("PTTL", "tollgate:ten:alice");
                TimeUnit.MILLISECONDS.sleep(250);

                assertThat(ttl).isBetween(150L, 200L);
                assertThat(redis.server().command("EXISTS", "tollgate:ten:alice"))
                        .isEqualTo(0L);
                assertThat(redisTime.tryAcquire("alice", TEN_PER_SECOND, 10).allowed())
                        .as("an expired key is a full bucket")
                        .isTrue();
            }
        }

        @Test
        void aKeyOfAnotherTypeGivesADegradedDecisionThatNamesTheError() {
            redis.server().command("HSET", "tollgate:ten:mallory", "field", "someone else's hash");

            Decision decision = limiter.tryAcquire("mallory", TEN_PER_SECOND);

            assertThat(decision.degraded()).isTrue();
            assertThat(decision.degradation().cause()).isEqualTo(Degradation.Cause.ERROR_REPLY);
            assertThat(decision.degradation().detail())
                    .contains("tollgate:ten:mallory")
                    .contains("WRONGTYPE");
        }

        @Test
        void aKeyHoldingSomeoneElsesStringIsLeftAloneAndNamedInTheDegradation() {
            redis.server().command("SET", "tollgate:ten:mallory", "someone else's value");

            Decision decision = limiter.tryAcquire("mallory", TEN_PER_SECOND);

            assertThat(decision.degradation().detail()).contains("holds a value that is not a Tollgate bucket");
            assertThat(redis.server().command("GET", "tollgate:ten:mallory")).isEqualTo("someone else's value");
        }

        @Test
        void keysThatHoldNoBucketFailOnlyTheirOwnRequestsAndNeverOpenTheCircuit() {
            redis.server().command("HSET", "tollgate:ten:mallory", "field", "someone else's hash");
            redis.server().command("SET", "tollgate:ten:trudy", "someone else's value");

            for (int i = 0; i < 20; i++) {
                assertThat(limiter.tryAcquire("mallory", TEN_PER_SECOND)
                                .degradation()
                                .detail())
                        .contains("WRONGTYPE");
                assertThat(limiter.tryAcquire("trudy", TEN_PER_SECOND)
                                .degradation()
                                .detail())
                        .contains("not a Tollgate bucket");
            }
            assertThatThrownBy(() -> limiter.inspect("mallory", TEN_PER_SECOND)).hasMessageContaining("WRONGTYPE");
            assertThatThrownBy(() -> limiter.inspect("trudy", TEN_PER_SECOND))
                    .hasMessageContaining("not a Tollgate bucket");

            assertThat(limiter.guard().breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(limiter.tryAcquire("alice", TEN_PER_SECOND).degraded()).isFalse();
        }

        @Test
        void theAsynchronousFormCompletesNormallyWithTheDegradedDecision() {
            redis.server().command("HSET", "tollgate:ten:mallory", "field", "x");

            assertThat(limiter.tryAcquireAsync("mallory", TEN_PER_SECOND, 1).toCompletableFuture())
                    .succeedsWithin(Duration.ofSeconds(5))
                    .satisfies(decision ->
                            assertThat(decision.degradation().detail()).contains("WRONGTYPE"));
        }

        @Test
        void keysOfAnyCharactersAreDistinctBuckets() {
            List<String> keys = List.of(
                    "nul\u0000byte",
                    "nul",
                    "new\nline",
                    "new",
                    "ключ",
                    "键",
                    "emoji🔑",
                    "?",
                    "\uD800",
                    "\uDBFF",
                    "#hash",
                    "spaces and\ttabs",
                    "{braces}",
                    "x".repeat(1_000_000),
                    "x".repeat(1_000_001));

            for (String key : keys) {
                limiter.tryAcquire(key, TEN_PER_SECOND, 10);
            }

            for (String key : keys) {
                assertThat(limiter.tryAcquire(key, TEN_PER_SECOND).allowed())
                        .as("bucket of %s was drained once", key.length() > 20 ? key.length() + " chars" : key)
                        .isFalse();
            }
            assertThat(StoredKeys.count(redis.server())).isEqualTo(keys.size());
        }

        @Test
        void keepsAVeryLongKeyAsItsDigestUnderTheOneKeyRule() {
            String huge = "x".repeat(1_000_000);

            limiter.tryAcquire(huge, TEN_PER_SECOND);

            assertThat(StoredKeys.of(redis.server()))
                    .containsExactly("tollgate:ten:" + LimiterArguments.boundedKey(huge))
                    .allSatisfy(key -> assertThat(key).startsWith("tollgate:ten:sha256:"));
        }

        @Test
        void keepsAKeyOfTheLongestLengthAsItIsWhateverItsBytes() {
            // 256 characters of three UTF-8 bytes each: the rule counts characters, in memory and on Redis alike
            String longest = "键".repeat(LimiterArguments.MAX_KEY_LENGTH);

            limiter.tryAcquire(longest, TEN_PER_SECOND);

            assertThat(StoredKeys.of(redis.server())).containsExactly("tollgate:ten:" + longest);
        }
    }

    @Nested
    class ScriptCache {

        @Test
        void reloadsTheScriptAfterScriptFlush() {
            limiter.tryAcquire("alice", TEN_PER_SECOND, 4);

            redis.server().command("SCRIPT", "FLUSH");
            Decision afterFlush = limiter.tryAcquire("alice", TEN_PER_SECOND, 4);

            assertThat(afterFlush.allowed()).isTrue();
            assertThat(afterFlush.remaining()).isEqualTo(2);
            assertThat(redis.server().command("SCRIPT", "EXISTS", limiter.scriptDigest()))
                    .isEqualTo(List.of(1L));
        }

        @Test
        void survivesARestartOfRedisBetweenCalls() {
            limiter.tryAcquire("alice", TEN_PER_SECOND, 4);

            redis.server().restart();
            awaitReconnected();
            Decision afterRestart = limiter.tryAcquire("alice", TEN_PER_SECOND, 4);

            assertThat(afterRestart.degraded()).as("decided by Redis").isFalse();
            assertThat(afterRestart.allowed()).isTrue();
            assertThat(afterRestart.remaining())
                    .as("the restarted Redis is empty")
                    .isEqualTo(6);
        }
    }

    @Nested
    class InspectAndReset {

        @Test
        void inspectSaysWhatTheBucketHoldsAndWritesNothing() {
            limiter.tryAcquire("alice", TEN_PER_SECOND, 4);
            Object stored = redis.server().command("GET", "tollgate:ten:alice");
            time.advance(Duration.ofMillis(100));

            BucketState state = limiter.inspect("alice", TEN_PER_SECOND);

            assertThat(state.tokens()).isEqualTo(7);
            assertThat(state.untilFull()).isEqualTo(Duration.ofMillis(300));
            assertThat(redis.server().command("GET", "tollgate:ten:alice")).isEqualTo(stored);
            assertThat(limiter.inspect("bob", TEN_PER_SECOND).tokens())
                    .as("a key never used")
                    .isEqualTo(10);
            assertThat(redis.server().command("EXISTS", "tollgate:ten:bob")).isEqualTo(0L);
        }

        @Test
        void aRefundGivesTokensBackUpToCapacityOnEveryInstance() {
            limiter.tryAcquire("erin", TEN_PER_SECOND, 7);
            try (RedisRateLimiter other = RedisRateLimiter.builder()
                    .timeout(PATIENT)
                    .uri(redis.server().uri())
                    .clientClock(time)
                    .build()) {
                other.refundAsync("erin", TEN_PER_SECOND, 5)
                        .toCompletableFuture()
                        .join();
                assertThat(limiter.inspect("erin", TEN_PER_SECOND).tokens()).isEqualTo(8);

                other.refundAsync("erin", TEN_PER_SECOND, 10)
                        .toCompletableFuture()
                        .join();
            }

            assertThat(limiter.inspect("erin", TEN_PER_SECOND).tokens())
                    .as("never more than capacity")
                    .isEqualTo(10);
            assertThat(limiter.tryAcquire("erin", TEN_PER_SECOND, 10).allowed()).isTrue();
            assertThat(limiter.tryAcquire("erin", TEN_PER_SECOND).allowed()).isFalse();
        }

        @Test
        void aChargeTakesTheBucketNoDeeperThanItsPolicysMaxDebtWhateverItAsks() {
            BucketState after = limiter.charge("mallory", TEN_PER_SECOND, 100_000);
            BucketState again = limiter.charge("mallory", TEN_PER_SECOND, 100_000);
            Decision refused = limiter.tryAcquire("mallory", TEN_PER_SECOND);

            assertThat(after.untilFull()).as("the fill, and a second of debt").isEqualTo(Duration.ofSeconds(2));
            assertThat(again).as("no deeper").isEqualTo(after);
            assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(1_100));
        }

        @Test
        void aChargeAfterTheFactLeavesTheBucketInDebtForEveryInstanceUntilRefunded() {
            Policy owing = TEN_PER_SECOND.withMaxDebt(Duration.ofSeconds(5)); // up to 50 tokens of debt
            limiter.tryAcquire("frank", owing, 4);
            try (RedisRateLimiter other = RedisRateLimiter.builder()
                    .timeout(PATIENT)
                    .uri(redis.server().uri())
                    .clientClock(time)
                    .build()) {
                BucketState charged = other.charge("frank", owing, 25); // 19 tokens of debt

                Decision refused = limiter.tryAcquire("frank", owing);
                // on the instance that remembers the refusal: a refund ends it there
                limiter.refundAsync("frank", owing, 10).toCompletableFuture().join();
                limiter.refundAsync("frank", owing, 10).toCompletableFuture().join();
                Decision afterRefunds = limiter.tryAcquire("frank", owing);

                assertThat(charged.tokens()).isZero();
                assertThat(charged.untilFull()).isEqualTo(Duration.ofMillis(2_900));
                assertThat(refused.allowed()).isFalse();
                assertThat(refused.retryAfter()).isEqualTo(Duration.ofSeconds(2));
                assertThat(afterRefunds.allowed())
                        .as("20 refunded of 19 owed: one token back")
                        .isTrue();
            }
        }

        @Test
        void resetLetsTheClientInAgainAtOnceOnEveryInstance() {
            for (int i = 0; i < 11; i++) {
                limiter.tryAcquire("carol", TEN_PER_SECOND);
            }
            try (RedisRateLimiter other = RedisRateLimiter.builder()
                    .timeout(PATIENT)
                    .uri(redis.server().uri())
                    .clientClock(time)
                    .build()) {
                other.reset("carol", TEN_PER_SECOND);
            }

            assertThat(redis.server().command("EXISTS", "tollgate:ten:carol")).isEqualTo(0L);
            assertThat(limiter.tryAcquire("carol", TEN_PER_SECOND, 10).allowed())
                    .as("a new bucket, though this instance had remembered a refusal")
                    .isTrue();
        }

        @Test
        void aNewBucketThatStartsEmptyBeginsWithItsFirstRequestEvenARefusedOne() {
            Policy earned = Policy.of("earned", Limit.of(2, Rate.perSecond(10)).withInitialTokens(0));

            Decision first = limiter.tryAcquire("dave", earned);
            time.advance(Duration.ofMillis(100));
            Decision second = limiter.tryAcquire("dave", earned);

            assertThat(first.allowed()).isFalse();
            assertThat(first.retryAfter()).isEqualTo(Duration.ofMillis(100));
            assertThat(second.allowed())
                    .as("one token refilled since the first request")
                    .isTrue();
        }

        @Test
        void holdsSaysWhetherRedisKeepsTheKeysBuckets() {
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
        void onAnUnreachableRedisInspectAndResetSaySo() throws Exception {
            int closed = FreePorts.nobodyListens();
            try (RedisRateLimiter unreachable = RedisRateLimiter.builder()
                    .uri("redis://127.0.0.1:" + closed)
                    .build()) {
                assertThatThrownBy(() -> unreachable.inspect("alice", TEN_PER_SECOND))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageStartingWith("not connected to Redis at 127.0.0.1:" + closed);
                assertThatThrownBy(() -> unreachable.reset("alice", TEN_PER_SECOND))
                        .isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> unreachable.holds("alice", TEN_PER_SECOND))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageStartingWith("not connected to Redis at 127.0.0.1:" + closed);
            }
        }
    }

    /** Waits until the limiter's connection, reconnecting by itself, reaches Redis again. */
    private void awaitReconnected() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (limiter.ping().toCompletableFuture().join().isPresent()) {
            assertThat(System.nanoTime()).as("reconnected within 10 s").isLessThan(deadline);
            try {
                TimeUnit.MILLISECONDS.sleep(20);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Nested
    class Connections {

        @RegisterExtension
        final LoggedLines logged = new LoggedLines(RedisRateLimiter.class);

        @Test
        void whileRedisIsUnreachableTheLogSaysSoOnceNotEverySecond() throws Exception {
            int closed = FreePorts.nobodyListens();
            try (RedisRateLimiter unreachable = RedisRateLimiter.builder()
                    .uri("redis://127.0.0.1:" + closed)
                    .build()) {
                TimeUnit.MILLISECONDS.sleep(4_500); // four more attempts, a second apart
            }

            assertThat(logged.lines())
                    .filteredOn(line -> line.getLevel() == Level.WARNING)
                    .singleElement()
                    .satisfies(line -> assertThat(line.getMessage()).startsWith("Tollgate cannot connect"));
        }

        @Test
        void itSaysInOneLineWhereTheBucketsLiveAndHowItDecides() {
            int before = logged.lines().size(); // the limiter of every test has said its line already
            try (RedisRateLimiter described = RedisRateLimiter.builder()
                    .uri(redis.server().uri())
                    .failurePolicy(FailurePolicy.DENY)
                    .build()) {
                assertThat(logged.lines().subList(before, logged.lines().size()))
                        .extracting(line -> new SimpleFormatter().formatMessage(line))
                        .containsExactly("Tollgate keeps its buckets in Redis at 127.0.0.1:"
                                + redis.server().port()
                                + " (no TLS); budget 50 ms, on failure DENY, batching on; connected");
            }
        }

        @Test
        void requiredAtStartARedisThatCannotBeReachedFailsTheBuildSayingWhy() throws Exception {
            int closed = FreePorts.nobodyListens();
            redis.server().command("ACL", "SETUSER", "strict", "on", ">right", "~tollgate:*", "+@all");
            try {
                assertThatThrownBy(() -> RedisRateLimiter.builder()
                                .uri("redis://127.0.0.1:" + closed)
                                .requireRedisAtStart(true)
                                .build())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageStartingWith("Redis is required at start (requireRedisAtStart), but it could not be"
                                + " reached: not connected to Redis at 127.0.0.1:" + closed + ": Connection refused");
                assertThatThrownBy(() -> RedisRateLimiter.builder()
                                .uri("redis://strict:wrong@127.0.0.1:"
                                        + redis.server().port())
                                .requireRedisAtStart(true)
                                .build())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("Redis answered WRONGPASS");
            } finally {
                redis.server().command("ACL", "DELUSER", "strict");
            }
        }

        @Test
        void aWrongPasswordIsReportedWithRedisOwnAnswer() {
            redis.server().command("ACL", "SETUSER", "careful", "on", ">right", "~tollgate:*", "+@all");
            String uri = "redis://careful:wrong@127.0.0.1:" + redis.server().port();

            try (RedisRateLimiter refused = RedisRateLimiter.builder()
                    .timeout(PATIENT)
                    .uri(uri)
                    .failurePolicy(FailurePolicy.DENY)
                    .build()) {
                Decision decision = refused.tryAcquire("alice", TEN_PER_SECOND);

                assertThat(decision.degraded()).isTrue();
                assertThat(decision.degradation().detail())
                        .startsWith("not connected to Redis at 127.0.0.1:"
                                + redis.server().port() + ": Redis answered" + " WRONGPASS");
                assertThat(refused.ping().toCompletableFuture().join())
                        .hasValueSatisfying(why -> assertThat(why).contains("WRONGPASS"));
            } finally {
                redis.server().command("ACL", "DELUSER", "careful");
            }
        }

        /**
         * Lettuce closes the channel of a failed handshake before it reports why, and now and then (1 to 3
         * connections in 1 000 on two busy cores, measured) what it noticed of the closed channel came first
         * ("Connection closed prematurely", "RedisHandshakeHandler not registered"): the limiter asks again at once.
         * 200 connections here, 2 000 in the deep run.
         */
        @Test
        void aWrongPasswordIsReportedWithRedisOwnAnswerEveryTime() {
            redis.server().command("ACL", "SETUSER", "strict", "on", ">right", "~tollgate:*", "+@all");
            List<String> lost = new ArrayList<>();
            try {
                for (int i = 0, connections = TestDepth.runs(200, 2_000); i < connections; i++) {
                    Throwable refused = catchThrowable(() -> RedisRateLimiter.builder()
                            .uri("redis://strict:wrong@127.0.0.1:"
                                    + redis.server().port())
                            .requireRedisAtStart(true)
                            .build()
                            .close());
                    if (refused == null || !refused.getMessage().contains("Redis answered WRONGPASS")) {
                        lost.add(String.valueOf(refused));
                    }
                }
            } finally {
                redis.server().command("ACL", "DELUSER", "strict");
            }

            assertThat(lost).as("the refusals that did not say Redis's answer").isEmpty();
        }

        @Test
        void authenticatesWithTheUserAndPasswordInTheUri() {
            redis.server().command("ACL", "SETUSER", "limiter", "on", ">s3cret", "~tollgate:*", "+@all");
            String uri = "redis://limiter:s3cret@127.0.0.1:" + redis.server().port();

            try (RedisRateLimiter authenticated =
                    RedisRateLimiter.builder().timeout(PATIENT).uri(uri).build()) {
                assertThat(authenticated.tryAcquire("alice", TEN_PER_SECOND).allowed())
                        .isTrue();
            } finally {
                redis.server().command("ACL", "DELUSER", "limiter");
            }
        }

        @Test
        void reusesAnApplicationsClientAndLeavesItOpen() {
            io.lettuce.core.RedisClient client =
                    io.lettuce.core.RedisClient.create(redis.server().uri());
            try {
                try (RedisRateLimiter shared = RedisRateLimiter.builder()
                        .timeout(PATIENT)
                        .client(client)
                        .build()) {
                    shared.tryAcquire("alice", TEN_PER_SECOND);
                }
                try (var connection = client.connect()) {
                    assertThat(connection.sync().exists("tollgate:ten:alice")).isEqualTo(1L);
                }
            } finally {
                client.shutdown();
            }
        }

        @Test
        void rejectsAnythingButExactlyOneWayToReachRedis() {
            assertThatThrownBy(() -> RedisRateLimiter.builder().build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("0 were given");
            assertThatThrownBy(() -> RedisRateLimiter.builder()
                            .uri(redis.server().uri())
                            .clusterUris(List.of(redis.server().uri()))
                            .build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("2 were given");
        }

        @Test
        void rejectsAUriThatIsNotRedis() {
            assertThatThrownBy(() ->
                            RedisRateLimiter.builder().uri("http://example.com").build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("invalid Redis URI 'http://example.com'");
        }

        @Test
        void startsWhileRedisIsUnreachableAndDecidesByTheFailurePolicy() {
            long start = System.nanoTime();
            try (RedisRateLimiter unreachable = RedisRateLimiter.builder()
                    .uri("redis://127.0.0.1:1")
                    .failurePolicy(FailurePolicy.DENY)
                    .build()) {
                long builtMillis = (System.nanoTime() - start) / 1_000_000;

                Decision decision = unreachable.tryAcquire("alice", TEN_PER_SECOND);

                // The builder waits two seconds for a first connection, then builds anyway: the claim is that it
                // does not wait on, so the bound leaves a busy machine eight seconds more to notice
                assertThat(builtMillis).isLessThan(10_000);
                assertThat(decision.allowed()).isFalse();
                assertThat(decision.degradation().fallback()).isEqualTo(FailurePolicy.DENY);
                assertThat(decision.degradation().cause()).isEqualTo(Degradation.Cause.UNREACHABLE);
                assertThat(decision.degradation().detail()).contains("127.0.0.1:1");
            }
        }
    }

    @Test
    void rejectsBadArgumentsBeforeTalkingToRedis() {
        assertThatThrownBy(() -> limiter.tryAcquire("", TEN_PER_SECOND)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> limiter.tryAcquire("alice", TEN_PER_SECOND, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> limiter.tryAcquire("alice", TEN_PER_SECOND, 11))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exceeds the smallest capacity");
        assertThatThrownBy(() -> limiter.acquire("alice", TEN_PER_SECOND, 1, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(StoredKeys.count(redis.server())).isZero();
    }
}
