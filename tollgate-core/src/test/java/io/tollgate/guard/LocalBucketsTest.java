package io.tollgate.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The buckets the LOCAL failure policy decides on, fed with what Redis reported. */
class LocalBucketsTest {

    /** Ten tokens, one a second; a tick is a microsecond, so a token is a million ticks of debt. */
    private static final Policy TEN = Policy.of("ten", Limit.of(10, Rate.perSecond(1)));

    private static final long TOKEN = 1_000_000;

    private final ManualTimeSource time = new ManualTimeSource(1_000_000_000);
    private final LocalBuckets alone = new LocalBuckets(1_000, () -> 1, time);

    @Test
    void aKeyNeverSeenStartsFull() {
        Decision decision = alone.tryAcquire(TEN, "alice", 10);

        assertThat(decision.allowed()).isTrue();
        assertThat(decision.remaining()).isZero();
    }

    @Test
    void aKeyStartsFromWhatRedisLastReported() {
        alone.learn(TEN, "alice", new long[] {7 * TOKEN}, 1, now(), now());

        assertThat(alone.tryAcquire(TEN, "alice", 3).allowed()).isTrue();
        assertThat(alone.tryAcquire(TEN, "alice", 1).allowed()).isFalse();
    }

    @Test
    void aKeyRedisReportedEmptyIsRefusedWithTheRetryAfterItsBucketImplies() {
        alone.learn(TEN, "alice", new long[] {10 * TOKEN + TOKEN / 4}, 1, now(), now());
        time.advance(Duration.ofMillis(100));

        Decision refused = alone.tryAcquire(TEN, "alice", 1);

        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(1_150));
        assertThat(refused.resetAfter()).isEqualTo(Duration.ofMillis(10_150));
    }

    @Test
    void refillsFromWhenTheAnswerArrived() {
        alone.learn(TEN, "alice", new long[] {10 * TOKEN}, 1, now(), now());

        time.advance(Duration.ofMillis(2_500));

        assertThat(alone.tryAcquire(TEN, "alice", 2).allowed()).isTrue();
        assertThat(alone.tryAcquire(TEN, "alice", 1).allowed()).isFalse();
    }

    @Test
    void anOlderAnswerNeverReplacesANewerOne() {
        alone.learn(TEN, "alice", new long[] {10 * TOKEN}, 20, now(), now());

        alone.learn(TEN, "alice", new long[] {0}, 10, now(), now());

        assertThat(alone.tryAcquire(TEN, "alice", 1).allowed()).isFalse();
    }

    @Test
    void anAnswerToARequestSentBeforeALocalChargeDoesNotForgetThatCharge() {
        long sentBefore = now();
        time.advance(Duration.ofMillis(1));
        alone.tryAcquire(TEN, "alice", 6); // decided here: Redis has not seen it

        alone.learn(TEN, "alice", new long[] {2 * TOKEN}, 5, sentBefore, now());

        assertThat(alone.tryAcquire(TEN, "alice", 4).allowed())
                .as("10 - 6 left, not 10 - 2")
                .isTrue();
        assertThat(alone.tryAcquire(TEN, "alice", 1).allowed()).isFalse();
    }

    @Test
    void anAnswerToARequestSentAfterALocalChargeReplacesWhatIsKnown() {
        alone.tryAcquire(TEN, "alice", 6);
        time.advance(Duration.ofMillis(1));

        alone.learn(TEN, "alice", new long[] {2 * TOKEN}, 5, now(), now());

        assertThat(alone.tryAcquire(TEN, "alice", 8).allowed()).isTrue();
    }

    @Test
    void withSeveralInstancesEachTakesItsShareOfWhatRedisReported() {
        LocalBuckets third = new LocalBuckets(1_000, () -> 3, time);
        Policy thirty = Policy.of("thirty", Limit.of(30, Rate.perSecond(3)));

        long fifteenTaken = 15 * thirty.limits().get(0).refill().ticksPerToken();
        third.learn(thirty, "alice", new long[] {fifteenTaken}, 1, now(), now());

        assertThat(third.share(thirty).limits()).containsExactly(Limit.of(10, Rate.perSecond(1)));
        assertThat(third.tryAcquire(thirty, "alice", 5).allowed())
                .as("a third of the 15 left")
                .isTrue();
        assertThat(third.tryAcquire(thirty, "alice", 1).allowed()).isFalse();
    }

    @Test
    void whenTheCountOfInstancesChangesAKnownBucketBecomesTheNewShareFullAgainAtTheSameTime() {
        AtomicInteger instances = new AtomicInteger(1);
        LocalBuckets live = new LocalBuckets(1_000, instances::get, time);
        live.learn(TEN, "alice", new long[] {6 * TOKEN}, 1, now(), now()); // 4 left, full again in 6 s

        instances.set(2); // a share of 5 tokens, one every 2 s: 3 spent, so that it too is full in 6 s

        assertThat(live.untilFullMicros(TEN, "alice")).isEqualTo(6 * TOKEN);
        assertThat(live.tryAcquire(TEN, "alice", 2).allowed())
                .as("the share's two tokens left")
                .isTrue();
        assertThat(live.tryAcquire(TEN, "alice", 1).allowed()).isFalse();
    }

    @Test
    void aKnownRefusalTakesNothingAndAKeyWithTokensOrNeverSeenHasNone() {
        alone.learn(TEN, "alice", new long[] {10 * TOKEN}, 1, now(), now());
        alone.learn(TEN, "bob", new long[] {5 * TOKEN}, 1, now(), now());

        Decision refused = alone.knownRefusal(TEN, "alice", 1);

        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofSeconds(1));
        assertThat(alone.knownRefusal(TEN, "bob", 5)).as("five tokens left").isNull();
        assertThat(alone.knownRefusal(TEN, "carol", 1)).as("never seen").isNull();
        assertThat(alone.tryAcquire(TEN, "bob", 5).allowed())
                .as("nothing was taken")
                .isTrue();
    }

    @Test
    void aKeyIsFullAgainWhenItsBucketWouldBe() {
        alone.learn(TEN, "alice", new long[] {4 * TOKEN}, 1, now(), now());

        assertThat(alone.untilFullMicros(TEN, "alice")).isEqualTo(4 * TOKEN);
        assertThat(alone.untilFullMicros(TEN, "bob")).isZero();
    }

    private long now() {
        return time.nowMicros();
    }
}
