package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisExtension;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Concurrency limits on a real Redis: exact across instances, leases that come back when their instance
 * dies and stay while it lives, and the failure policies when Redis cannot decide.
 */
@Timeout(120)
class RedisPermitsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void emptyRedis() {
        redis.server().heal();
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void close() throws Exception {
        redis.server().heal();
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private RedisRateLimiter limiter(FailurePolicy onFailure) {
        return limiter(onFailure, Duration.ofMillis(500));
    }

    private RedisRateLimiter limiter(FailurePolicy onFailure, Duration budget) {
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(budget)
                .failurePolicy(onFailure)
                .expectedInstances(2)
                .build();
        resources.add(limiter);
        return limiter;
    }

    @Test
    void aPermitTakenOnOneInstanceCountsOnAnotherUntilItIsClosed() {
        ConcurrencyLimit exports = ConcurrencyLimit.of("exports", 2);
        RedisRateLimiter one = limiter(FailurePolicy.DENY);
        RedisRateLimiter two = limiter(FailurePolicy.DENY);

        Permit first = one.tryAcquirePermit("customer-42", exports);
        Permit second = two.tryAcquirePermit("customer-42", exports);
        Permit third = one.tryAcquirePermit("customer-42", exports);
        int openBefore = two.inFlight("customer-42", exports);
        first.close();
        Permit fourth = two.tryAcquirePermit("customer-42", exports);

        assertThat(List.of(first.acquired(), second.acquired(), third.acquired(), fourth.acquired()))
                .containsExactly(true, true, false, true);
        assertThat(third.inFlight()).isEqualTo(2);
        assertThat(third.degraded()).isFalse();
        assertThat(openBefore).isEqualTo(2);
        assertThat(one.inFlight("customer-42", exports)).isEqualTo(2);
        assertThat(one.inFlight("customer-7", exports)).isZero();
    }

    @Test
    void neverMoreInFlightThanTheLimitAcrossThreeInstancesAndManyThreads() throws Exception {
        ConcurrencyLimit five = ConcurrencyLimit.of("five", 5);
        Duration patient = Duration.ofSeconds(5); // not a test of failures: no decision may degrade on a busy machine
        List<RedisRateLimiter> instances = List.of(
                limiter(FailurePolicy.DENY, patient),
                limiter(FailurePolicy.DENY, patient),
                limiter(FailurePolicy.DENY, patient));
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        AtomicInteger degraded = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(24);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 24; t++) {
            RedisRateLimiter instance = instances.get(t % instances.size());
            workers.add(threads.submit(() -> {
                start.await();
                for (int i = 0; i < 150; i++) {
                    try (Permit permit = instance.tryAcquirePermit("hot", five)) {
                        if (permit.degraded()) {
                            degraded.incrementAndGet();
                        }
                        if (permit.acquired()) {
                            most.accumulateAndGet(running.incrementAndGet(), Math::max);
                            served.incrementAndGet();
                            Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                            running.decrementAndGet();
                        }
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> worker : workers) {
            worker.get(100, TimeUnit.SECONDS);
        }
        threads.shutdown();

        assertThat(degraded.get()).as("decisions Redis did not make").isZero();
        assertThat(most.get()).isEqualTo(5);
        assertThat(served.get()).isGreaterThan(5);
        assertThat(instances.get(0).inFlight("hot", five)).isZero();
    }

    @Test
    void theSlotsOfAKilledInstanceComeBackWhenTheirLeasesRunOutAndALivingOnesStay() throws Exception {
        ConcurrencyLimit exports = ConcurrencyLimit.of("exports", 3).withLease(Duration.ofSeconds(3));
        RedisRateLimiter survivor = limiter(FailurePolicy.DENY);
        Permit held = survivor.tryAcquirePermit("customer-42", exports);
        Process other = holdPermitsInAnotherJvm(exports, 2);

        Permit whileAlive = survivor.tryAcquirePermit("customer-42", exports);
        Thread.sleep(exports.lease().multipliedBy(2).toMillis()); // both renew: nothing runs out
        Permit stillAlive = survivor.tryAcquirePermit("customer-42", exports);
        other.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Permit justAfterTheKill = survivor.tryAcquirePermit("customer-42", exports);
        long killedAt = System.nanoTime();
        awaitTrue(() -> survivor.inFlight("customer-42", exports) == 1, Duration.ofSeconds(10));
        Duration comeBack = Duration.ofNanos(System.nanoTime() - killedAt);
        Permit afterTheLeases = survivor.tryAcquirePermit("customer-42", exports);

        assertThat(held.acquired()).isTrue();
        assertThat(whileAlive.acquired()).isFalse();
        assertThat(stillAlive.acquired()).isFalse();
        assertThat(justAfterTheKill.acquired()).isFalse();
        assertThat(comeBack).isLessThan(exports.lease().plusSeconds(2));
        assertThat(afterTheLeases.acquired()).isTrue();
        assertThat(afterTheLeases.inFlight()).isEqualTo(2);
    }

    @Test
    void whileRedisIsDownTheFailurePolicyDecides() {
        ConcurrencyLimit two = ConcurrencyLimit.of("two", 2);
        RedisRateLimiter allowing = limiter(FailurePolicy.ALLOW);
        RedisRateLimiter denying = limiter(FailurePolicy.DENY);
        RedisRateLimiter local = limiter(FailurePolicy.LOCAL);
        redis.server().kill();

        Permit allowed = allowing.tryAcquirePermit("k", two);
        Permit denied = denying.tryAcquirePermit("k", two);
        Permit localFirst = local.tryAcquirePermit("k", two);
        Permit localSecond = local.tryAcquirePermit("k", two);
        localFirst.close();
        Permit localThird = local.tryAcquirePermit("k", two);

        assertThat(allowed.acquired()).isTrue();
        assertThat(allowed.degradation().fallback()).isEqualTo(FailurePolicy.ALLOW);
        assertThat(allowed.degradation().cause()).isIn(Degradation.Cause.UNREACHABLE, Degradation.Cause.TIMEOUT);
        assertThat(denied.acquired()).isFalse();
        assertThat(denied.degradation().fallback()).isEqualTo(FailurePolicy.DENY);
        // two expected instances: this one's share of 2 is 1
        assertThat(List.of(localFirst.acquired(), localSecond.acquired(), localThird.acquired()))
                .containsExactly(true, false, true);
    }

    @Test
    void permitsAndDecisionsShareTheCircuitBreakerOfTheirNode() {
        ConcurrencyLimit two = ConcurrencyLimit.of("two", 2);
        Policy perIp = Policy.of("per-ip", Limit.of(10, Rate.perSecond(10)));
        RedisRateLimiter permitsFirst = breaking(FailurePolicy.DENY);
        RedisRateLimiter decisionsFirst = breaking(FailurePolicy.DENY);
        permitsFirst.inFlight("k", two); // connected before Redis goes
        decisionsFirst.inFlight("k", two);
        redis.server().kill();

        List<Degradation.Cause> permitsThenDecision = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            permitsThenDecision.add(
                    permitsFirst.tryAcquirePermit("k", two).degradation().cause());
        }
        permitsThenDecision.add(
                permitsFirst.tryAcquire("k", perIp).degradation().cause());
        List<Degradation.Cause> decisionsThenPermit = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            decisionsThenPermit.add(
                    decisionsFirst.tryAcquire("k", perIp).degradation().cause());
        }
        decisionsThenPermit.add(
                decisionsFirst.tryAcquirePermit("k", two).degradation().cause());

        // three failures open the one breaker of the node: the fourth call, of the other kind, is not made
        assertThat(permitsThenDecision.subList(0, 3)).doesNotContain(Degradation.Cause.CIRCUIT_OPEN);
        assertThat(permitsThenDecision.get(3)).isEqualTo(Degradation.Cause.CIRCUIT_OPEN);
        assertThat(decisionsThenPermit.subList(0, 3)).doesNotContain(Degradation.Cause.CIRCUIT_OPEN);
        assertThat(decisionsThenPermit.get(3)).isEqualTo(Degradation.Cause.CIRCUIT_OPEN);
        assertThat(permitsFirst.circuitState()).isEqualTo("open");
    }

    @Test
    void everyPermitIsCountedWithWhereItCameFromAndRedisTimeForIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ConcurrencyLimit one = ConcurrencyLimit.of("one", 1);
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(Duration.ofMillis(500))
                .failurePolicy(FailurePolicy.ALLOW)
                .metrics(MicrometerMetrics.of(registry))
                .build();
        resources.add(limiter);

        Permit acquired = limiter.tryAcquirePermit("k", one);
        Permit refused = limiter.tryAcquirePermit("k", one);
        redis.server().kill();
        Permit degraded = limiter.tryAcquirePermit("k", one);

        assertThat(List.of(acquired.acquired(), refused.acquired(), degraded.acquired()))
                .containsExactly(true, false, true);
        assertThat(permits(registry, "acquired", "redis")).isEqualTo(1);
        assertThat(permits(registry, "refused", "redis")).isEqualTo(1);
        assertThat(permits(registry, "acquired", "fallback")).isEqualTo(1);
        assertThat(registry.get("tollgate.redis.latency").timer().count()).isGreaterThanOrEqualTo(2);
        assertThat(registry.get("tollgate.redis.failures").counters().stream()
                        .mapToDouble(Counter::count)
                        .sum())
                .isEqualTo(1);
    }

    private static double permits(SimpleMeterRegistry registry, String outcome, String source) {
        return registry.get("tollgate.permits")
                .tags("limit", "one", "outcome", outcome, "source", source)
                .counter()
                .count();
    }

    /** A limiter whose node's breaker opens after three failures in a row, and stays open for a minute. */
    private RedisRateLimiter breaking(FailurePolicy onFailure) {
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(Duration.ofMillis(500))
                .failurePolicy(onFailure)
                .circuitBreaker(3, Duration.ofMinutes(1), Duration.ofMinutes(1))
                .build();
        resources.add(limiter);
        return limiter;
    }

    @Test
    void aSlotTakenByAnAnswerThatCameTooLateIsGivenBack() throws Exception {
        ConcurrencyLimit one = ConcurrencyLimit.of("one", 1);
        RedisRateLimiter limiter = limiter(FailurePolicy.ALLOW);
        limiter.inFlight("k", one); // connected and scripts loaded before Redis stalls

        redis.server().pause();
        Permit late = limiter.tryAcquirePermit("k", one);
        redis.server().resume();
        awaitTrue(() -> limiter.inFlight("k", one) == 0, Duration.ofSeconds(5));
        Permit next = limiter.tryAcquirePermit("k", one);

        assertThat(late.acquired()).isTrue();
        assertThat(late.degradation().cause()).isEqualTo(Degradation.Cause.TIMEOUT);
        assertThat(next.acquired()).isTrue();
        assertThat(next.degraded()).isFalse();
    }

    @Test
    void closingTheLimiterGivesBackItsOpenPermits() {
        ConcurrencyLimit one = ConcurrencyLimit.of("one", 1);
        RedisRateLimiter closing =
                RedisRateLimiter.builder().uri(redis.server().uri()).build();
        RedisRateLimiter other = limiter(FailurePolicy.DENY);
        Permit held = closing.tryAcquirePermit("k", one);

        closing.close();

        assertThat(held.acquired()).isTrue();
        assertThat(other.tryAcquirePermit("k", one).acquired()).isTrue();
    }

    @Test
    void onARedisClusterEachKeysSlotsLiveOnItsMaster() {
        ConcurrencyLimit two = ConcurrencyLimit.of("two", 2);
        try (RedisCluster cluster = RedisCluster.start(3);
                // a budget a busy machine cannot blow: what is tested is where the slots live, not the fallback
                RedisRateLimiter one = RedisRateLimiter.builder()
                        .clusterUris(cluster.uris())
                        .timeout(Duration.ofSeconds(5))
                        .build();
                RedisRateLimiter other = RedisRateLimiter.builder()
                        .clusterUris(cluster.uris())
                        .timeout(Duration.ofSeconds(5))
                        .build()) {
            Connections.connected(one);
            Connections.connected(other);
            List<Boolean> acquired = new ArrayList<>();
            for (int key = 0; key < 12; key++) {
                acquired.add(one.tryAcquirePermit("customer-" + key, two).acquired());
                acquired.add(other.tryAcquirePermit("customer-" + key, two).acquired());
                acquired.add(one.tryAcquirePermit("customer-" + key, two).acquired());
            }

            for (int key = 0; key < 12; key++) {
                assertThat(acquired.subList(key * 3, key * 3 + 3)).containsExactly(true, true, false);
                assertThat(other.inFlight("customer-" + key, two)).isEqualTo(2);
            }
        }
    }

    private Process holdPermitsInAnotherJvm(ConcurrencyLimit limit, int count) throws Exception {
        Process process = ForkedJvm.of(
                        PermitHolder.class,
                        redis.server().uri(),
                        limit.name(),
                        Integer.toString(limit.maxInFlight()),
                        Long.toString(limit.lease().toMillis()),
                        Integer.toString(count))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        resources.add(process::destroyForcibly);
        BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("held " + count);
        return process;
    }

    private static void awaitTrue(BooleanSupplier condition, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }
}
