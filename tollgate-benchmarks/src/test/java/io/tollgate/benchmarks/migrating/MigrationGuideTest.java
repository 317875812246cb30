package io.tollgate.benchmarks.migrating;

import static org.assertj.core.api.Assertions.assertThat;

import com.alibaba.csp.sentinel.Entry;
import com.alibaba.csp.sentinel.SphU;
import com.alibaba.csp.sentinel.slots.block.BlockException;
import com.alibaba.csp.sentinel.slots.block.RuleConstant;
import com.alibaba.csp.sentinel.slots.block.flow.FlowRule;
import com.alibaba.csp.sentinel.slots.block.flow.FlowRuleManager;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.tollgate.Decision;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.server.ServerConfig;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * docs/migrating.md: each peer's example runs beside Tollgate's on the same requests, and they decide alike; the
 * files that stand for Sentinel's flow rules and nginx's {@code limit_req} are read by the server as shown (the
 * server's own tests run nginx beside the proxy's file).
 */
@Timeout(60)
class MigrationGuideTest {

    private static final String PAGE = "docs/migrating.md";

    @Test
    void everyJavaExampleOfThePageIsRunHere() {
        int examples = DocumentationExamples.assertRunBy(
                "tollgate-benchmarks/src/test/java/io/tollgate/benchmarks/migrating/MigrationGuideTest.java", PAGE);

        assertThat(examples).isEqualTo(5);
    }

    @Test
    void bucket4jAndTollgateDecideABurstAlike() {
        long start = System.nanoTime();
        Bucket bucket = Bucket.builder()
                .addLimit(limit -> limit.capacity(10).refillGreedy(5, Duration.ofSeconds(1)))
                .build();
        ConsumptionProbe probe = bucket.tryConsumeAndReturnRemaining(1);
        boolean bucket4jAllowed = probe.isConsumed();

        Policy perClient = Policy.of("per-client", Limit.of(10, Rate.perSecond(5)));
        RateLimiter limiter = InMemoryRateLimiter.create();
        Decision decision = limiter.tryAcquire("alice", perClient, 1);
        boolean tollgateAllowed = decision.allowed();

        List<Boolean> bucket4j = new ArrayList<>(List.of(bucket4jAllowed));
        List<Boolean> tollgate = new ArrayList<>(List.of(tollgateAllowed));
        Duration bucket4jWait = Duration.ZERO;
        Duration tollgateWait = Duration.ZERO;
        for (int request = 2; request <= 11; request++) {
            ConsumptionProbe next = bucket.tryConsumeAndReturnRemaining(1);
            bucket4j.add(next.isConsumed());
            bucket4jWait = Duration.ofNanos(next.getNanosToWaitForRefill());
            Decision nextDecision = limiter.tryAcquire("alice", perClient, 1);
            tollgate.add(nextDecision.allowed());
            tollgateWait = nextDecision.retryAfter();
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(bucket4j.subList(0, 10)).containsOnly(true);
        assertThat(tollgate.subList(0, 10)).containsOnly(true);
        if (elapsed.compareTo(Duration.ofMillis(150)) < 0) { // no token is back yet for either
            assertThat(bucket4j.get(10)).isFalse();
            assertThat(tollgate.get(10)).isFalse();
            assertThat(tollgateWait).isCloseTo(bucket4jWait, Duration.ofMillis(50));
        }
    }

    @Test
    void redissonAndTollgateOnOneRedisAdmitTheSameBurst() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            String redisUri = server.uri();
            warmUp(redisUri);
            Config config = new Config();
            config.useSingleServer().setAddress(redisUri);
            RedissonClient redisson = Redisson.create(config);
            try {
                long start = System.nanoTime();
                RRateLimiter rateLimiter = redisson.getRateLimiter("alice");
                rateLimiter.trySetRate(RateType.OVERALL, 10, Duration.ofSeconds(1));
                boolean redissonAllowed = rateLimiter.tryAcquire(1);

                Policy tenPerSecond = Policy.of("ten-per-second", Limit.of(10, Rate.of(10, Duration.ofSeconds(1))));
                RedisRateLimiter redisLimiter =
                        RedisRateLimiter.builder().uri(redisUri).build();
                boolean redisAllowed =
                        redisLimiter.tryAcquire("alice", tenPerSecond, 1).allowed();

                try (redisLimiter) {
                    List<Boolean> redissonDecisions = new ArrayList<>(List.of(redissonAllowed));
                    List<Boolean> tollgateDecisions = new ArrayList<>(List.of(redisAllowed));
                    for (int request = 2; request <= 11; request++) {
                        redissonDecisions.add(rateLimiter.tryAcquire(1));
                        tollgateDecisions.add(redisLimiter
                                .tryAcquire("alice", tenPerSecond, 1)
                                .allowed());
                    }
                    Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

                    assertThat(redissonDecisions)
                            .containsExactly(true, true, true, true, true, true, true, true, true, true, false);
                    assertThat(tollgateDecisions.subList(0, 10)).containsOnly(true);
                    if (elapsed.compareTo(Duration.ofMillis(100)) < 0) { // a token bucket gives one back every 100 ms
                        assertThat(tollgateDecisions.get(10)).isFalse();
                    }
                }
            } finally {
                redisson.shutdown();
            }
        }
    }

    /**
     * Loads the script into Redis and this JVM's Redis classes, so that the page's example, which keeps the default
     * time budget of 50 ms, is decided by Redis on a busy machine too: this compares decisions Redis makes.
     */
    private static void warmUp(String redisUri) {
        Policy any = Policy.of("warm-up", Limit.of(1_000, Rate.perSecond(1_000)));
        try (RedisRateLimiter warm = RedisRateLimiter.builder()
                .uri(redisUri)
                .timeout(Duration.ofSeconds(5))
                .build()) {
            for (int call = 0; call < 200; call++) {
                assertThat(warm.tryAcquire("warm-up-" + call, any, 1).allowed()).isTrue();
            }
        }
    }

    @Test
    void sentinelsFlowRuleAndTollgatesPolicyAdmitTheSameBurst() {
        warmUpSentinel();
        long start = System.nanoTime();
        FlowRule orders = new FlowRule("order-api");
        orders.setGrade(RuleConstant.FLOW_GRADE_QPS);
        orders.setCount(20);
        FlowRuleManager.loadRules(List.of(orders));

        boolean sentinelAllowed;
        try (Entry entry = SphU.entry("order-api")) {
            sentinelAllowed = true;
        } catch (BlockException refused) {
            sentinelAllowed = false;
        }

        Policy orderApi = ServerConfig.parse(
                        DocumentationExamples.blocks(PAGE, "yaml").get(0), "sentinel.yaml")
                .policies()
                .get("order-api");
        RateLimiter limiter = InMemoryRateLimiter.create();
        long sentinel = sentinelAllowed ? 1 : 0;
        long tollgate = 0;
        for (int request = 0; request < 30; request++) {
            if (request > 0) {
                sentinel += sentinelEntry("order-api") ? 1 : 0;
            }
            tollgate += limiter.tryAcquire("constant:order-api", orderApi).allowed() ? 1 : 0;
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(sentinel).as("Sentinel's window of a second").isEqualTo(20);
        // a token bucket of 20 refilled 20 a second: the same 20 at once, and one more every 50 ms after
        assertThat(tollgate).isBetween(20L, 20L + elapsed.toMillis() / 50);
    }

    /** One entry of a resource, as the page's example makes it: true if Sentinel let it through. */
    private static boolean sentinelEntry(String resource) {
        try (Entry entry = SphU.entry(resource)) {
            return true;
        } catch (BlockException refused) {
            return false;
        }
    }

    /** Sentinel's first entry starts its statistics: a resource of its own, so the burst measured is warm. */
    private static void warmUpSentinel() {
        for (int i = 0; i < 100; i++) {
            sentinelEntry("warm-up");
        }
    }

    @Test
    void theSentinelAndNginxFilesAreReadAsTheyAreDescribed() {
        List<String> files = DocumentationExamples.blocks(PAGE, "yaml");

        assertThat(files).hasSize(2);
        ServerConfig sentinel = ServerConfig.parse(files.get(0), "sentinel.yaml");
        assertThat(sentinel.policies().get("order-api").limits()).containsExactly(Limit.of(20, Rate.perSecond(20)));
        assertThat(sentinel.rules())
                .singleElement()
                .satisfies(rule -> assertThat(rule.policy().name()).isEqualTo("order-api"));
        ServerConfig nginx = ServerConfig.parse(files.get(1), "nginx.yaml");
        Policy perIp = nginx.policies().get("perip");
        assertThat(perIp.limits()).containsExactly(Limit.of(21, Rate.perSecond(10)));
        // burst=20 nodelay: 21 at once, then one every 100 ms
        RateLimiter limiter = InMemoryRateLimiter.create();
        long admitted = 0;
        for (int request = 0; request < 30; request++) {
            admitted += limiter.tryAcquire("203.0.113.7", perIp).allowed() ? 1 : 0;
        }
        assertThat(admitted).isEqualTo(21);
    }
}
