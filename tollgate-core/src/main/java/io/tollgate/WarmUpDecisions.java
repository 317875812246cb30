package io.tollgate;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The decisions of {@link RateLimiter#warmUp}: waves of asynchronous decisions, as a server under load
 * sends them, and synchronous ones, on a few keys of two policies, one that allows everything and one that
 * refuses most requests, so that both paths of every layer are compiled before real traffic arrives.
 */
final class WarmUpDecisions {

    /** Enough for the JIT's top tier to compile the paths of a decision. */
    static final int DECISIONS = 10_000;

    /** Allows every warm-up decision: a million tokens, refilled at a million per second. */
    static final Policy PASSING =
            Policy.of(RateLimiter.WARM_UP_POLICY_PREFIX, Limit.of(1_000_000, Rate.perSecond(1_000_000)));

    /** Refuses most: one token, refilled every millisecond. */
    static final Policy REFUSING =
            Policy.of(RateLimiter.WARM_UP_POLICY_PREFIX + "-refused", Limit.of(1, Rate.perSecond(1_000)));

    private static final int IN_FLIGHT = 64;
    private static final int KEYS = 8;

    private WarmUpDecisions() {}

    static boolean run(RateLimiter limiter, Duration maxTime) {
        long deadline =
                System.nanoTime() + Math.min(LimiterArguments.maxWaitMicros(maxTime), Long.MAX_VALUE / 4_000) * 1_000;
        String prefix = WarmUpKeys.key(UUID.randomUUID() + "-");
        CompletableFuture<?>[] wave = new CompletableFuture<?>[IN_FLIGHT];
        for (int done = 0; done < DECISIONS; done += IN_FLIGHT + 1) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            for (int i = 0; i < IN_FLIGHT; i++) {
                wave[i] = limiter.tryAcquireAsync(prefix + i % KEYS, i % 4 == 0 ? REFUSING : PASSING, 1)
                        .toCompletableFuture();
            }
            limiter.tryAcquire(prefix + done % KEYS, done % 2 == 0 ? REFUSING : PASSING);
            try {
                CompletableFuture.allOf(wave).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return false;
            } catch (ExecutionException e) {
                throw new IllegalStateException("a warm-up decision failed", e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }
}
