package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.runtime.Stores;
import io.tollgate.testing.RedisExtension;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the store monitor says of an outage, read from its log lines as an operator reads them. */
class StoreMonitorTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final ByteArrayOutputStream logged = new ByteArrayOutputStream();
    private PrintStream stderr;

    @BeforeEach
    void captureTheLog() {
        stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, logged), true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreTheLog() {
        System.setErr(stderr);
        redis.server().heal();
    }

    @Test
    void anOutagesCountLeavesOutTheWarmUpsDecisionsThatTheMetersForgot() throws Exception {
        AtomicLong degraded = new AtomicLong(2); // two warm-up decisions the failure policy made, counted
        try (RedisRateLimiter limiter =
                        RedisRateLimiter.builder().uri(redis.server().uri()).build();
                StoreMonitor monitor =
                        StoreMonitor.of(Stores.adopt(limiter).orElseThrow(), "redis under test", degraded::get)) {
            assertThat(check(monitor)).isEmpty();
            degraded.set(0); // the warm-up is done: the meters forget its decisions
            monitor.countFromNow();

            redis.server().kill();
            assertThat(check(monitor)).isPresent();
            degraded.set(20);
            redis.server().restart();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (check(monitor).isPresent() && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(100);
            }

            assertThat(logged.toString(StandardCharsets.UTF_8))
                    .contains("store redis under test is unavailable")
                    .containsPattern("store redis under test answers again after \\d+\\.\\d s; the failure policy"
                            + " made 20 decisions meanwhile");
        }
    }

    private static Optional<String> check(StoreMonitor monitor) {
        return monitor.check().toCompletableFuture().join();
    }

    /** Writes to two streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        Tee(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public synchronized void write(int b) throws java.io.IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws java.io.IOException {
            first.write(b, off, len);
            second.write(b, off, len);
        }
    }
}
