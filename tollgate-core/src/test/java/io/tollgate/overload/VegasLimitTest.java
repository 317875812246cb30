package io.tollgate.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The learnt limit against a service whose latency is known: {@code workers} requests are served at once in {@code
 * service} each, so with {@code n} in flight a request takes {@code service x max(1, n / workers)}. A client that
 * always fills the limit drives it.
 */
class VegasLimitTest {

    private static final long SERVICE = TimeUnit.MILLISECONDS.toNanos(10);

    /** The time the samples end at: each ends a latency after the last, as on a service that is never idle. */
    private long now;

    @Test
    void growsToTheServicesConcurrencyAndHoldsAFewQueuedBeyondIt() {
        VegasLimit limit = new VegasLimit(1, 5, 1000);

        drive(limit, 20, 2_000);

        // queued = limit - workers settles between alpha and beta, 3 and 6 times log10(limit)
        assertThat(limit.limit()).isBetween(20 + 3, 20 + 9);
    }

    @Test
    void learnsDownWhenTheServiceSlowsAndBackUpWhenItRecovers() {
        VegasLimit limit = new VegasLimit(1, 20, 1000);
        drive(limit, 40, 3_000);
        int healthy = limit.limit();

        drive(limit, 10, 3_000); // a slow database: a quarter of the requests are served at once
        int slowed = limit.limit();
        drive(limit, 40, 3_000);
        int recovered = limit.limit();

        assertThat(healthy).isBetween(40 + 4, 40 + 10);
        assertThat(slowed).isBetween(10 + 3, 10 + 7);
        assertThat(recovered).as("back in the same band").isBetween(40 + 4, 40 + 10);
    }

    @Test
    void aDropCutsTheLimitByATenthAtOnceDownToItsLeast() {
        VegasLimit limit = new VegasLimit(5, 100, 1000);

        limit.sample(SERVICE, 100, true, SERVICE);
        int once = limit.limit();
        for (int i = 0; i < 100; i++) {
            limit.sample(SERVICE, 100, true, SERVICE * (i + 2));
        }

        assertThat(once).isEqualTo(90);
        assertThat(limit.limit()).isEqualTo(5);
    }

    @Test
    void anIdleServiceDoesNotEarnALimitItNeverTried() {
        VegasLimit limit = new VegasLimit(1, 10, 1000);

        for (int i = 0; i < 10_000; i++) {
            limit.sample(SERVICE, 2, false, SERVICE * i); // two in flight, never queueing
        }

        assertThat(limit.limit()).isEqualTo(10);
    }

    @Test
    void neverGrowsBeyondItsMost() {
        VegasLimit limit = new VegasLimit(1, 10, 50);

        drive(limit, 1000, 5_000);

        assertThat(limit.limit()).isEqualTo(50);
    }

    @Test
    void relearnsTheLeastLatencyOfAServiceWhoseOwnTimeGrewForGood() {
        VegasLimit limit = new VegasLimit(1, 20, 1000);
        drive(limit, 20, 3_000);

        // every request now takes three times as long, queue or not: the old least latency no longer holds
        for (int i = 0; i < 20_000; i++) {
            int inFlight = limit.limit();
            long latency = 3 * latency(inFlight, 20);
            now += latency / inFlight;
            limit.sample(latency, inFlight, false, now);
        }

        assertThat(limit.limit()).as("back near the service's concurrency").isBetween(20 + 3, 20 + 9);
    }

    @Test
    void refusesLimitsOutOfOrder() {
        assertThatThrownBy(() -> new VegasLimit(10, 5, 100))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the limits must be 1 <= min <= initial <= max, were min 10, initial 5, max 100");
        assertThatThrownBy(() -> new VegasLimit(0, 5, 100)).isInstanceOf(IllegalArgumentException.class);
    }

    private void drive(VegasLimit limit, int workers, int samples) {
        for (int i = 0; i < samples; i++) {
            int inFlight = limit.limit();
            long latency = latency(inFlight, workers);
            now += latency / inFlight; // with inFlight requests each taking latency, one ends every latency / inFlight
            limit.sample(latency, inFlight, false, now);
        }
    }

    private static long latency(int inFlight, int workers) {
        return Math.max(SERVICE, SERVICE * inFlight / workers);
    }
}
