package io.tollgate.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The deny cache's ceiling, and what it forgets when another instance changes a key. */
class DenyCacheTest {

    private static final Policy HOURLY = Policy.of("hourly", Limit.of(3, Rate.perHour(3)));
    private static final long TWENTY_MINUTES = Duration.ofMinutes(20).toNanos() / 1_000;
    private static final long CEILING = Duration.ofSeconds(5).toNanos() / 1_000;

    private final ManualTimeSource time = new ManualTimeSource(1_000_000_000);
    private final DenyCache cache = new DenyCache(1_000, CEILING, time);

    @Test
    void aRefusalIsReliedOnUntilTheCeilingWithTheStoresRetryAfter() {
        cache.update(HOURLY, "alice", 1, time.nowMicros(), refusal());
        time.advance(Duration.ofMillis(4_999));

        DenyCache.Lookup lookup = cache.lookup(HOURLY, "alice", 1, time.nowMicros());

        assertThat(lookup.refusal()).isNotNull();
        assertThat(lookup.refusal().retryAfterMicros()).isEqualTo(TWENTY_MINUTES - 4_999_000);
    }

    @Test
    void pastTheCeilingOneRequestAsksTheStoreAgainAndTheOthersWaitForIt() {
        cache.update(HOURLY, "alice", 1, time.nowMicros(), refusal());
        time.advance(Duration.ofSeconds(5));

        DenyCache.Lookup probe = cache.lookup(HOURLY, "alice", 1, time.nowMicros());
        DenyCache.Lookup waiter = cache.lookup(HOURLY, "alice", 1, time.nowMicros());

        assertThat(probe.refusal()).isNull();
        assertThat(probe.probing()).isTrue();
        assertThat(waiter.refusal()).isNull();
        assertThat(waiter.probing()).isFalse();
        assertThat(waiter.probe()).isSameAs(probe.probe());
        assertThat(cache.refusedForMicros(HOURLY, "alice", 1, time.nowMicros())).isZero();
    }

    @Test
    void aRefusalShorterThanTheCeilingEndsWhenTheStoreSaid() {
        Decision shortRefusal = new Decision(false, HOURLY.limits().get(0), 0, 0, 1_000_000, 1_000_000);
        cache.update(HOURLY, "alice", 1, time.nowMicros(), shortRefusal);
        time.advance(Duration.ofSeconds(1));

        assertThat(cache.lookup(HOURLY, "alice", 1, time.nowMicros()).refusal()).isNull();
    }

    @Test
    void aKeyChangedElsewhereIsForgottenAndTheOthersKept() {
        cache.update(HOURLY, "alice", 1, time.nowMicros(), refusal());
        cache.update(HOURLY, "bob", 1, time.nowMicros(), refusal());

        cache.forget("hourly", "alice");

        assertThat(cache.lookup(HOURLY, "alice", 1, time.nowMicros()).refusal()).isNull();
        assertThat(cache.lookup(HOURLY, "bob", 1, time.nowMicros()).refusal()).isNotNull();
    }

    @Test
    void everyRefusalIsForgottenWhenAnnouncementsMayHaveBeenMissed() {
        cache.update(HOURLY, "alice", 1, time.nowMicros(), refusal());
        cache.update(HOURLY, "bob", 1, time.nowMicros(), refusal());

        cache.clear();

        assertThat(cache.lookup(HOURLY, "alice", 1, time.nowMicros()).refusal()).isNull();
        assertThat(cache.lookup(HOURLY, "bob", 1, time.nowMicros()).refusal()).isNull();
    }

    @Test
    void aChangeHeardMarksAnswersToRequestsSentBeforeItNotLaterOnes() {
        ChangesHeard heard = new ChangesHeard(1_000, time);
        long sentBefore = time.nowMicros();
        time.advance(Duration.ofMillis(3));

        heard.heard("hourly", "alice");
        time.advance(Duration.ofMillis(1));

        assertThat(heard.heardSince("hourly", "alice", sentBefore)).isTrue();
        assertThat(heard.heardSince("hourly", "alice", time.nowMicros())).isFalse();
        assertThat(heard.heardSince("hourly", "bob", sentBefore)).isFalse();
        time.advance(ChangesHeard.KEPT);
        assertThat(heard.heardSince("hourly", "alice", sentBefore))
                .as("kept ten seconds")
                .isFalse();
    }

    private static Decision refusal() {
        return new Decision(false, HOURLY.limits().get(0), 0, 0, TWENTY_MINUTES, TWENTY_MINUTES * 3);
    }
}
