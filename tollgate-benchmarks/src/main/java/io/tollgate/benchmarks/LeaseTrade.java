package io.tollgate.benchmarks;

import io.tollgate.DecisionEvent;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;

/**
 * What leases cost, measured: two or three limiters (as instances behind a load balancer) share one hot key whose
 * bucket refills 20 000 tokens a second (capacity 2 000), each sending a share of a paced demand (even, or three
 * quarters on one instance), below, at and above the refill rate, with and without leases. For each, the decisions, the refusals, and the refusals
 * that Redis (or the deny cache) gave one instance while another held at least a token of the key in a lease:
 * tokens the bucket did not have because a lease held them. Also the most tokens held elsewhere at such a refusal.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.LeaseTrade [seconds]}
 * (default 10 per row). It starts its own redis-server. Prints a Markdown table.
 */
public final class LeaseTrade {

    private static final Policy POLICY = Policy.of("shared", Limit.of(2_000, Rate.perSecond(20_000)));
    private static final double[] DEMAND = {0.5, 1.0, 1.5};

    private LeaseTrade() {}

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        try (RedisServer redis = RedisServer.start()) {
            System.out.println(
                    Runtime.getRuntime().availableProcessors() + " cores, redis " + redis.info("redis_version") + ", "
                            + seconds + " s per row; policy: capacity 2 000, refill 20 000 a second, one key");
            System.out.println();
            System.out.println("| instances | demand, of the refill rate | spread | leases | decisions | answered from"
                    + " a lease, per 100 000 | refused per 100 000 | refused while another instance held a lease, per"
                    + " 100 000 | most tokens held elsewhere at such a refusal | admitted per second |");
            System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
            for (int instances : new int[] {2, 3}) {
                for (double demand : DEMAND) {
                    for (boolean skewed : new boolean[] {false, true}) {
                        for (boolean leases : new boolean[] {false, true}) {
                            redis.command("FLUSHALL");
                            run(redis, instances, demand, skewed, leases, seconds);
                        }
                    }
                }
            }
        }
    }

    /**
     * One row: {@code skewed}, the first instance gets three quarters of the demand and the others share the rest;
     * else each gets an even share.
     */
    private static void run(
            RedisServer redis, int instances, double demand, boolean skewed, boolean leases, int seconds)
            throws InterruptedException {
        List<RedisRateLimiter> limiters = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            RedisRateLimiter.Builder builder =
                    RedisRateLimiter.builder().uri(redis.uri()).timeout(Duration.ofSeconds(1));
            limiters.add((leases ? builder.leases(POLICY.name()) : builder).build());
        }
        AtomicLong decisions = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong refusedWhileLeased = new AtomicLong();
        AtomicLong admitted = new AtomicLong();
        AtomicLong fromLeases = new AtomicLong();
        LongAccumulator mostHeld = new LongAccumulator(Math::max, 0);
        AtomicLong measuring = new AtomicLong(); // 0 while warming up, 1 once measuring
        for (RedisRateLimiter limiter : limiters) {
            limiter.onDecision(event -> {
                if (measuring.get() == 0 || event.outcome() == DecisionEvent.Outcome.CHARGED) {
                    return;
                }
                decisions.incrementAndGet();
                if (event.tookTokens()) {
                    admitted.incrementAndGet();
                    fromLeases.addAndGet(event.source().equals(DecisionEvent.LEASE) ? 1 : 0);
                    return;
                }
                refused.incrementAndGet();
                long heldElsewhere = 0;
                for (RedisRateLimiter other : limiters) {
                    if (other != limiter) {
                        heldElsewhere += other.leasedTokens("hot", POLICY);
                    }
                }
                if (heldElsewhere >= event.cost()) {
                    refusedWhileLeased.incrementAndGet();
                    mostHeld.accumulate(heldElsewhere);
                }
            });
        }
        // Each instance sends its share of the demand every millisecond (20 a millisecond is the refill rate)
        ScheduledExecutorService pacers = Executors.newScheduledThreadPool(instances);
        for (int i = 0; i < instances; i++) {
            RedisRateLimiter limiter = limiters.get(i);
            double share = !skewed ? 1.0 / instances : i == 0 ? 0.75 : 0.25 / (instances - 1);
            double perMillisecond = 20 * demand * share;
            double[] owed = {0};
            pacers.scheduleAtFixedRate(
                    () -> {
                        owed[0] += perMillisecond;
                        for (; owed[0] >= 1; owed[0]--) {
                            limiter.tryAcquireAsync("hot", POLICY, 1);
                        }
                    },
                    0,
                    1,
                    TimeUnit.MILLISECONDS);
        }
        Thread.sleep(2_000); // warm up
        measuring.set(1);
        Thread.sleep(seconds * 1_000L);
        measuring.set(0);
        pacers.shutdownNow();
        pacers.awaitTermination(5, TimeUnit.SECONDS);
        limiters.forEach(RedisRateLimiter::close);
        long n = Math.max(1, decisions.get());
        System.out.println(String.format(
                Locale.ROOT,
                "| %d | %.1f× | %s | %s | %,d | %,.0f | %,.0f | %,.1f | %,d | %,.0f |",
                instances,
                demand,
                skewed ? "3/4 on one" : "even",
                leases ? "on" : "off",
                decisions.get(),
                fromLeases.get() * 100_000.0 / n,
                refused.get() * 100_000.0 / n,
                refusedWhileLeased.get() * 100_000.0 / n,
                mostHeld.get(),
                admitted.get() / (double) seconds));
    }
}
