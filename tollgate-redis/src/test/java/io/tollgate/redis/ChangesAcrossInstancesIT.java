package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * One truth across instances: a change made to a key outside a request on one instance (a reset, tokens given
 * back) reaches what every other instance remembers of it (its deny cache's refusal, the {@code LOCAL}
 * fallback's copy of the bucket) before it answers, through Redis, each other live instance confirming it; one
 * that does not confirm is named; and an announcement lost on its way costs no more than the deny cache's ceiling.
 */
@Isolated // alone on the machine: its bounds hold for a machine not busy with other tests
class ChangesAcrossInstancesIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** Three an hour: a refusal learnt here would last twenty minutes. */
    private static final Policy THREE_AN_HOUR = Policy.of("hourly", Limit.of(3, Rate.perHour(3)));

    private static final long WITHIN_MILLIS = 200;

    private final List<RedisRateLimiter> limiters = new ArrayList<>();

    @BeforeEach
    void emptyRedis() {
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void closeLimiters() {
        limiters.forEach(RedisRateLimiter::close);
        redis.server().heal();
    }

    private RedisRateLimiter limiter(Consumer<RedisRateLimiter.Builder> settings) {
        RedisRateLimiter.Builder builder =
                RedisRateLimiter.builder().uri(redis.server().uri()).timeout(Duration.ofMillis(200));
        settings.accept(builder);
        RedisRateLimiter limiter = builder.build();
        limiters.add(limiter);
        return limiter;
    }

    @Test
    void aResetAnswersOnceEveryOtherInstanceForgotTheRefusalItCached() throws Exception {
        List<RedisRateLimiter> three = List.of(limiter(b -> {}), limiter(b -> {}), limiter(b -> {}));
        refuseOnEach(three, "alice");

        Propagation reset = three.get(0).reset("alice", THREE_AN_HOUR);

        assertThat(reset.complete()).isTrue();
        assertThat(reset.confirmed())
                .containsExactlyInAnyOrder(
                        three.get(1).neighbours().id(),
                        three.get(2).neighbours().id());
        for (RedisRateLimiter other : three.subList(1, 3)) {
            assertThat(other.tryAcquire("alice", THREE_AN_HOUR).allowed())
                    .as("the very next request on another instance is admitted")
                    .isTrue();
        }
    }

    @Test
    void aResetNamesALiveInstanceThatDidNotConfirmAfterWaitingASecondForIt() {
        RedisRateLimiter one = limiter(b -> {});
        RedisRateLimiter other = limiter(b -> {});
        // an instance that stopped without withdrawing: live in Redis for a few seconds more, hearing nothing
        long until = System.currentTimeMillis() * 1_000 + TimeUnit.MINUTES.toMicros(1);
        redis.server().command("ZADD", "tollgate:instances/live", Long.toString(until), "gone/42/0badf00d");
        refuseOnEach(List.of(one, other), "alice");

        long start = System.nanoTime();
        Propagation reset = one.reset("alice", THREE_AN_HOUR);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(reset.complete()).isFalse();
        assertThat(reset.unconfirmed()).containsExactly("gone/42/0badf00d");
        assertThat(reset.confirmed()).containsExactly(other.neighbours().id());
        assertThat(tookMillis).as("waited for it, as long as the bound").isGreaterThanOrEqualTo(1_000);
        assertThat(other.tryAcquire("alice", THREE_AN_HOUR).allowed()).isTrue();
    }

    @Test
    void theChannelCarriesTheChangeAndEachConfirmationAsItsDocumentationSays() throws Exception {
        RedisRateLimiter one = limiter(b -> {});
        RedisRateLimiter other = limiter(b -> {});
        BlockingQueue<String> heard = new LinkedBlockingQueue<>();
        RedisClient client = RedisClient.create(redis.server().uri());
        try (StatefulRedisPubSubConnection<String, String> subscription = client.connectPubSub()) {
            subscription.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    heard.add(message);
                }
            });
            subscription.sync().subscribe("tollgate:changes");

            one.reset("carol smith", THREE_AN_HOUR);

            assertThat(heard.poll(5, TimeUnit.SECONDS))
                    .isEqualTo("changed " + one.neighbours().id() + " 1 hourly:carol smith");
            assertThat(heard.poll(5, TimeUnit.SECONDS))
                    .isEqualTo("heard " + other.neighbours().id() + " "
                            + one.neighbours().id() + " 1");
        } finally {
            client.shutdown();
        }
    }

    @Test
    void aResetIsConfirmedByAnInstanceServingAFloodOfRefusalsOnThousandsOfKeys() throws Exception {
        RedisRateLimiter one = limiter(b -> {});
        RedisRateLimiter other = limiter(b -> {});
        int keys = 2_000;
        for (int k = 0; k < keys; k++) { // every key empty, its refusal cached on the other instance
            one.tryAcquireAsync("flooder-" + k, THREE_AN_HOUR, 3)
                    .toCompletableFuture()
                    .join();
        }
        for (int k = 0; k < keys; k++) {
            other.tryAcquireAsync("flooder-" + k, THREE_AN_HOUR, 1)
                    .toCompletableFuture()
                    .join();
        }
        refuseOnEach(List.of(one, other), "alice");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong refused = new AtomicLong();
        Semaphore inFlight = new Semaphore(256);
        Thread flood = new Thread(
                () -> { // 256 in flight on the other instance, at random over the keys
                    SplittableRandom random = new SplittableRandom(3);
                    while (!stop.get()) {
                        inFlight.acquireUninterruptibly();
                        other.tryAcquireAsync("flooder-" + random.nextInt(keys), THREE_AN_HOUR, 1)
                                .whenComplete((decision, failure) -> {
                                    if (decision != null && !decision.allowed()) {
                                        refused.incrementAndGet();
                                    }
                                    inFlight.release();
                                });
                    }
                });
        flood.start();
        try {
            Thread.sleep(1_000); // the flood at full speed

            long start = System.nanoTime();
            Propagation reset = one.reset("alice", THREE_AN_HOUR);
            long confirmedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            boolean admitted = other.tryAcquire("alice", THREE_AN_HOUR).allowed();
            long refusedBefore = refused.get();
            Thread.sleep(200);
            long perSecond = (refused.get() - refusedBefore) * 5;
            System.out.printf(
                    "under a flood of %,d refusals/s on %,d keys, the reset was confirmed after %d ms%n",
                    perSecond, keys, confirmedAfter);
            assertThat(perSecond).as("the flood is still on").isGreaterThan(1_000);
            assertThat(reset.confirmed()).containsExactly(other.neighbours().id());
            assertThat(admitted).as("the next request after the reset answered").isTrue();
        } finally {
            stop.set(true);
            flood.join(10_000);
        }
    }

    @Test
    void aResetReachesEveryInstanceOnARedisClusterOfThreeMasters() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3)) {
            List<RedisRateLimiter> three = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                RedisRateLimiter limiter = Connections.connected(RedisRateLimiter.builder()
                        .clusterUris(cluster.uris())
                        .timeout(Duration.ofMillis(500))
                        .build());
                limiters.add(limiter);
                three.add(limiter);
            }
            List<String> keys = List.of("alice", "bob", "carol", "dave", "erin", "frank"); // slots on every master
            for (String key : keys) {
                refuseOnEach(three, key);
            }

            for (String key : keys) {
                Propagation reset = three.get(0).reset(key, THREE_AN_HOUR);

                assertThat(reset.confirmed())
                        .as("key %s", key)
                        .containsExactlyInAnyOrder(
                                three.get(1).neighbours().id(),
                                three.get(2).neighbours().id());
                for (RedisRateLimiter other : three.subList(1, 3)) {
                    assertThat(other.tryAcquire(key, THREE_AN_HOUR).allowed())
                            .as("key %s on another instance", key)
                            .isTrue();
                }
            }
        }
    }

    @Test
    void tokensGivenBackOnOneInstanceEndTheRefusalCachedOnAnother() throws Exception {
        RedisRateLimiter one = limiter(b -> {});
        RedisRateLimiter other = limiter(b -> {});
        for (int i = 0; i < 3; i++) {
            assertThat(one.tryAcquire("alice", THREE_AN_HOUR).allowed()).isTrue();
        }
        assertThat(other.tryAcquire("alice", THREE_AN_HOUR).allowed()).isFalse();
        assertThat(other.guard().cachedRefusalMicros(THREE_AN_HOUR, "alice", 1)).isPositive();

        one.refundAsync("alice", THREE_AN_HOUR, 1).toCompletableFuture().get(5, TimeUnit.SECONDS);

        // a refund is announced, not confirmed: it is on a request's path, which waits for no other instance
        assertThat(millisUntilAdmitted(other, "alice")).isLessThanOrEqualTo(WITHIN_MILLIS);
        assertThat(other.tryAcquire("alice", THREE_AN_HOUR).allowed())
                .as("one token was given back, and taken")
                .isFalse();
    }

    @Test
    void withTheSubscriptionKilledJustBeforeAResetAnInstanceAdmitsNoLaterThanTheCeilingAndResubscribes()
            throws Exception {
        Duration ceiling = Duration.ofSeconds(2);
        RedisRateLimiter one = limiter(b -> b.denyCacheMaxAge(ceiling));
        RedisRateLimiter other = limiter(b -> b.denyCacheMaxAge(ceiling));
        long subscribedBefore = other.neighbours().subscriptions();
        long oneSubscribedBefore = one.neighbours().subscriptions();
        refuseOnEach(List.of(one, other), "alice");
        long refusedAt = System.nanoTime();

        redis.server().command("CLIENT", "KILL", "TYPE", "pubsub");
        one.reset("alice", THREE_AN_HOUR);

        long admittedAfter = millisUntilAdmitted(other, "alice");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - refusedAt))
                .as("admitted no later than the ceiling after the refusal was learnt")
                .isLessThanOrEqualTo(ceiling.toMillis() + WITHIN_MILLIS);
        System.out.printf("after the subscription was killed, admitted %d ms after the reset%n", admittedAfter);
        awaitTrue(() -> other.neighbours().subscriptions() > subscribedBefore, "the instance resubscribes");
        // the one that reset resubscribes too, and forgets what it cached meanwhile: the refusals below outlast that
        awaitTrue(() -> one.neighbours().subscriptions() > oneSubscribedBefore, "the resetting instance resubscribes");
        awaitTrue(() -> subscribers() == 2, "both instances listen again");
        one.reset("alice", THREE_AN_HOUR);
        refuseOnEach(List.of(one, other), "alice");
        assertThat(one.reset("alice", THREE_AN_HOUR).confirmed())
                .as("once resubscribed, it confirms a reset again")
                .containsExactly(other.neighbours().id());
        assertThat(other.tryAcquire("alice", THREE_AN_HOUR).allowed()).isTrue();
    }

    /** On a clock the test moves: the ceiling is counted on the limiter's clock, not the machine's. */
    @Test
    void aChangeNobodyAnnouncedEndsACachedRefusalAtTheCeilingAndNotBefore() {
        Duration ceiling = Duration.ofSeconds(1);
        ManualTimeSource clock = new ManualTimeSource(1_700_000_000_000_000L);
        RedisRateLimiter limiter = limiter(b -> b.denyCacheMaxAge(ceiling).clientClock(clock));
        for (int i = 0; i < 3; i++) {
            limiter.tryAcquire("alice", THREE_AN_HOUR);
        }
        Decision refused = limiter.tryAcquire("alice", THREE_AN_HOUR);
        assertThat(refused.allowed()).isFalse();

        redis.server().command("DEL", "tollgate:hourly:alice"); // as an operator might, with redis-cli

        clock.advance(ceiling.minusMillis(1));
        assertThat(limiter.tryAcquire("alice", THREE_AN_HOUR).allowed())
                .as("still refused from the deny cache a millisecond before the ceiling")
                .isFalse();
        clock.advance(Duration.ofMillis(2));
        assertThat(limiter.tryAcquire("alice", THREE_AN_HOUR).allowed())
                .as("past the ceiling Redis is asked again, and holds a full bucket")
                .isTrue();
    }

    @Test
    void afterAResetAnotherInstanceDecidesLocallyFromAFullBucketNotFromTheEmptyOneItHadLearnt() throws Exception {
        RedisRateLimiter one = limiter(b -> b.expectedInstances(1));
        RedisRateLimiter other = limiter(b -> b.expectedInstances(1));
        refuseOnEach(List.of(one, other), "alice");
        assertThat(other.guard().knownUntilFullMicros(THREE_AN_HOUR, "alice"))
                .as("the other instance learnt the bucket empty")
                .isGreaterThan(TimeUnit.MINUTES.toMicros(50));

        Propagation reset = one.reset("alice", THREE_AN_HOUR);
        assertThat(reset.confirmed())
                .as("a limiter with a count of instances fixed confirms too")
                .containsExactly(other.neighbours().id());
        assertThat(other.guard().knownUntilFullMicros(THREE_AN_HOUR, "alice")).isZero();
        redis.server().pause(); // Redis late right after the reset
        try {
            Decision whileLate = other.tryAcquire("alice", THREE_AN_HOUR);
            for (int i = 0; i < 10; i++) { // enough calls left unanswered to open the circuit
                other.tryAcquireAsync("someone-" + i, THREE_AN_HOUR, 1);
            }
            Thread.sleep(2_500); // unanswered for two seconds: Redis counts as down
            List<Decision> whileDown = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                whileDown.add(other.tryAcquire("alice", THREE_AN_HOUR));
            }

            assertThat(whileLate.allowed()).isFalse();
            assertThat(whileLate.retryAfterMicros())
                    .as("while late, refused as Redis may be deciding, not as the empty bucket it had learnt")
                    .isLessThanOrEqualTo(TimeUnit.SECONDS.toMicros(1));
            assertThat(whileDown)
                    .extracting(Decision::allowed)
                    .as("while down, LOCAL decides from a full bucket of three")
                    .containsExactly(true, true, true, false);
            assertThat(whileDown).allMatch(Decision::degraded);
        } finally {
            redis.server().resume();
        }
    }

    @Test
    void aResetByARedisUserWithoutTheChannelDeletesTheBucketsAndSaysTheOthersWereNotTold() {
        redis.server().command("ACL", "SETUSER", "nochannel", "on", ">secret", "~tollgate:*", "+@all");
        try {
            RedisRateLimiter restricted = limiter(b ->
                    b.uri("redis://nochannel:secret@127.0.0.1:" + redis.server().port()));
            for (int i = 0; i < 3; i++) {
                restricted.tryAcquire("alice", THREE_AN_HOUR);
            }

            assertThatThrownBy(() -> restricted.reset("alice", THREE_AN_HOUR))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("were deleted, but the other instances could not be told")
                    .hasMessageContaining("can't publish to the channel")
                    .hasMessageContaining("ACL SETUSER <user> &tollgate:changes");
            assertThat(redis.server().command("EXISTS", "tollgate:hourly:alice"))
                    .isEqualTo(0L);
        } finally {
            redis.server().command("ACL", "DELUSER", "nochannel");
        }
    }

    /** Takes the key's three tokens and has each limiter refused once, so that each caches the refusal. */
    private static void refuseOnEach(List<RedisRateLimiter> instances, String key) {
        for (int i = 0; i < 3; i++) {
            assertThat(instances.get(0).tryAcquire(key, THREE_AN_HOUR).allowed())
                    .isTrue();
        }
        for (RedisRateLimiter instance : instances) {
            // A reset announced just before may reach an instance after it cached the refusal, and end it (it
            // cannot tell the refusal came later): refused again once the announcement is in, it caches it for good.
            // Ten seconds for the announcement to arrive: the loop ends at the first refusal cached, the bound only
            // says when to give up on a busy machine
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            do {
                assertThat(instance.tryAcquire(key, THREE_AN_HOUR).allowed()).isFalse();
            } while (instance.guard().cachedRefusalMicros(THREE_AN_HOUR, key, 1) == 0 && System.nanoTime() < until);
            assertThat(instance.guard().cachedRefusalMicros(THREE_AN_HOUR, key, 1))
                    .as("the refusal is cached")
                    .isGreaterThan(TimeUnit.MINUTES.toMicros(10));
        }
    }

    /** Asks every 5 ms until the key is admitted; returns how long that took, in ms (at most 10 s). */
    private static long millisUntilAdmitted(RedisRateLimiter limiter, String key) throws InterruptedException {
        long start = System.nanoTime();
        while (!limiter.tryAcquire(key, THREE_AN_HOUR).allowed()) {
            if (System.nanoTime() - start > TimeUnit.SECONDS.toNanos(10)) {
                return Long.MAX_VALUE;
            }
            Thread.sleep(5);
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    private static long subscribers() {
        List<?> numsub = (List<?>) redis.server().command("PUBSUB", "NUMSUB", "tollgate:changes");
        return Long.parseLong(numsub.get(1).toString());
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
