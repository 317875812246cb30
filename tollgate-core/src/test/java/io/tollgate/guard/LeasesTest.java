package io.tollgate.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.DecisionEvent;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.fixtures.MapBucketStore;
import io.tollgate.fixtures.Seeds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Leases of hot keys over a store in a map, on a clock the test moves. */
class LeasesTest {

    /** A bucket that does not refill while a test runs: what it holds tells exactly what was taken. */
    private static final Policy HOT = Policy.of("hot", Limit.of(1_000, Rate.perHour(1)));

    private final ManualTimeSource clock = new ManualTimeSource();
    private final MapBucketStore store = new MapBucketStore(clock);
    private final List<GuardedRateLimiter<String>> made = new ArrayList<>();

    @AfterEach
    void close() {
        made.forEach(GuardedRateLimiter::close);
    }

    @Test
    void aKeyAskedForAboveTheHotRateIsAnsweredFromALease() {
        GuardedRateLimiter<String> guard = leasing(1);
        AtomicLong fromLease = countFromLease(guard);

        ask(guard, "alice", 300, Duration.ofMillis(1)); // 1 000 a second, for 300 ms

        assertThat(guard.leaseSlicesTaken()).isPositive();
        assertThat(fromLease.get()).as("answered from the lease").isPositive();
    }

    @Test
    void aKeyBelowTheHotRateIsNeverLeased() {
        GuardedRateLimiter<String> guard = leasing(1);

        ask(guard, "bob", 300, Duration.ofMillis(2)); // 500 a second

        assertThat(guard.leaseSlicesTaken()).isZero();
        assertThat(guard.tryAcquire("bob", HOT).remaining())
                .as("each asked the store")
                .isEqualTo(1_000 - 301);
    }

    /**
     * A key's rate is known once a whole window of its requests was counted on the guard's clock: however many
     * requests come before that, none is answered from a lease. How fast a machine decides does not change when
     * a key is leased, only how many requests pass before it is.
     */
    @Test
    void aKeyIsLeasedOnlyOnceAWholeWindowOfItsRequestsWasCounted() {
        Policy plenty = Policy.of(HOT.name(), Limit.of(1_000_000, Rate.perHour(1)));
        GuardedRateLimiter<String> guard = leasing(2);
        AtomicLong fromLease = countFromLease(guard);

        for (int i = 0; i < 10_000; i++) {
            guard.tryAcquire("grace", plenty); // far above the hot rate, all within the first window
        }
        assertThat(guard.leaseSlicesTaken())
                .as("slices within the first window")
                .isZero();

        clock.advance(Duration.ofMillis(Lease.WINDOW_MICROS / 1_000));
        for (int i = 0; i < 10; i++) {
            guard.tryAcquire("grace", plenty);
        }

        assertThat(guard.leaseSlicesTaken()).as("slices once the window passed").isPositive();
        assertThat(fromLease.get()).as("answered from the lease").isPositive();
    }

    @Test
    void aSliceIsNeverMoreThanItsShareOfHalfTheBucket() {
        GuardedRateLimiter<String> guard = leasing(4);

        Duration every = Duration.ofNanos(500_000); // 2 000 a second: 100 ms of it is 200 tokens
        ask(guard, "carol", 400, every);

        assertThat(guard.leaseSlicesTaken()).isPositive();
        long mostHeld = 0;
        for (int i = 0; i < 400; i++) {
            mostHeld = Math.max(mostHeld, guard.leasedTokens(HOT, "carol"));
            guard.tryAcquire("carol", HOT);
            clock.advance(every);
        }
        assertThat(mostHeld).as("a slice: 1 000 / (2 × 4 instances)").isEqualTo(125);
    }

    @Test
    void aSliceIsNotUsedPastItsLifeAndWhatIsLeftGoesBack() throws InterruptedException {
        GuardedRateLimiter<String> guard = leasing(1);
        long admitted = ask(guard, "dave", 300, Duration.ofMillis(1));
        assertThat(guard.leasedTokens(HOT, "dave")).isPositive();

        // Past the slice's 100 ms, and long enough that the key is no longer hot (no next slice is taken)
        clock.advance(Duration.ofMillis(250));
        Decision next = guard.tryAcquire("dave", HOT);

        assertThat(next.allowed()).isTrue();
        awaitGivenBack(guard, "dave");
        assertThat(bucketTokens(guard, "dave")).isEqualTo(1_000 - admitted - 1);
    }

    @Test
    void aChangeElsewhereGivesTheLeaseBack() {
        GuardedRateLimiter<String> guard = leasing(1);
        long admitted = ask(guard, "erin", 300, Duration.ofMillis(1));
        assertThat(guard.leasedTokens(HOT, "erin")).isPositive();

        guard.changedElsewhere(HOT.name(), "erin");

        assertThat(guard.leasedTokens(HOT, "erin")).isZero();
        assertThat(bucketTokens(guard, "erin")).isEqualTo(1_000 - admitted);
    }

    static LongStream seeds() {
        return Seeds.of(20, 200);
    }

    /**
     * Three instances on one store, each asked at its own pace, some hot and some not: whatever they admitted, the
     * store holds exactly the rest once they close, and none admitted more than the bucket held.
     */
    @ParameterizedTest
    @MethodSource("seeds")
    void instancesAdmitExactlyWhatTheStoreGranted(long seed) {
        Policy large = Policy.of(HOT.name(), Limit.of(5_000, Rate.perHour(1))); // leased from ~100 ms, empty by ~500
        SplittableRandom random = new SplittableRandom(seed);
        List<GuardedRateLimiter<String>> instances = List.of(leasing(3), leasing(3), leasing(3));
        long admitted = 0;
        int requests = 3_000 + random.nextInt(3_000);
        for (int i = 0; i < requests; i++) {
            GuardedRateLimiter<String> instance = instances.get(random.nextInt(instances.size()));
            long cost = 1 + random.nextInt(3);
            if (instance.tryAcquire("frank", large, cost).allowed()) {
                admitted += cost;
            }
            clock.advanceMicros(random.nextInt(400));
        }
        long slices = instances.stream()
                .mapToLong(GuardedRateLimiter::leaseSlicesTaken)
                .sum();
        instances.forEach(GuardedRateLimiter::close);

        assertThat(slices).as("slices taken").isPositive();
        assertThat(admitted).isLessThanOrEqualTo(5_000);
        assertThat(leasing(1).inspect("frank", large).tokens()).isEqualTo(5_000 - admitted);
    }

    /** Asks for the key {@code count} times, one every {@code every}; returns how many were admitted. */
    private long ask(GuardedRateLimiter<String> guard, String key, int count, Duration every) {
        long admitted = 0;
        for (int i = 0; i < count; i++) {
            admitted += guard.tryAcquire(key, HOT).allowed() ? 1 : 0;
            clock.advance(every);
        }
        return admitted;
    }

    private long bucketTokens(GuardedRateLimiter<String> guard, String key) {
        return guard.inspect(key, HOT).tokens();
    }

    private static void awaitGivenBack(GuardedRateLimiter<String> guard, String key) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (guard.leasedTokens(HOT, key) > 0 && System.nanoTime() < until) {
            Thread.sleep(5); // the sweep runs every 50 ms of the machine's time
        }
        assertThat(guard.leasedTokens(HOT, key)).isZero();
    }

    private static AtomicLong countFromLease(GuardedRateLimiter<String> guard) {
        AtomicLong counted = new AtomicLong();
        guard.onDecision(event -> {
            if (event.source().equals(DecisionEvent.LEASE)) {
                counted.incrementAndGet();
            }
        });
        return counted;
    }

    private GuardedRateLimiter<String> leasing(int instances) {
        GuardSettings patient = MapBucketStore.patient(clock);
        GuardedRateLimiter<String> guard = new GuardedRateLimiter<>(
                store,
                new GuardSettings(
                        patient.timeout(),
                        FailurePolicy.DENY,
                        Map.of(),
                        instances,
                        patient.breakerThreshold(),
                        patient.breakerFirstPause(),
                        patient.breakerLongestPause(),
                        0,
                        patient.denyCacheMaxAge(),
                        Set.of(HOT.name()),
                        MetricsRecorder.NONE,
                        clock,
                        patient.log()));
        made.add(guard);
        return guard;
    }
}
