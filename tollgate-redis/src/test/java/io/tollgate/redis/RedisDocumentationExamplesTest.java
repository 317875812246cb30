package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.Decision;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.runtime.TollgateRuntime;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Runs the Java examples of docs/redis.md, each written out exactly as the page shows it; the last test
 * fails if the page shows code that is not in this file.
 */
@Isolated // the documentation examples decide within the default budget of 50 ms
class RedisDocumentationExamplesTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Policy perClient = Policy.of("per-client", Limit.of(10, Rate.perSecond(5)));

    @Test
    void connectByUri() {
        String redisUri = redis.server().uri();

        // --- redis: connect
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redisUri) // or rediss://..., redis-sentinel://host:26379#mymaster
                .build();

        Decision decision = limiter.tryAcquire("alice", perClient);
        // ...
        limiter.close(); // on shutdown: closes the connection it opened
        // ---

        assertThat(decision.remaining()).isEqualTo(9);
    }

    @Test
    void letTheSettingsChooseTheStore() {
        String redisUri = redis.server().uri();

        // --- redis: runtime
        // the tree of a YAML or JSON file: {redis: {uri: ..., failure-policy: local}}
        ConfigNode settings = ConfigNode.of(Map.of("redis", Map.of("uri", redisUri, "failure-policy", "local")));
        try (TollgateRuntime tollgate = TollgateRuntime.open(settings)) {
            Decision decision = tollgate.limiter().tryAcquire("alice", perClient);
            System.out.println(tollgate.description()); // redis at redis://...
        }
        // ---

        try (TollgateRuntime again = TollgateRuntime.open(settings)) {
            assertThat(again.limiter().tryAcquire("alice", perClient).remaining())
                    .as("alice's bucket is in Redis, one token spent")
                    .isEqualTo(8);
            assertThat(again.description()).isEqualTo("redis at " + redisUri);
        }
        assertThatThrownBy(() -> TollgateRuntime.open(
                        ConfigNode.of(Map.of("redis", Map.of("uri", redisUri, "failure-policy", "maybe")))))
                .isInstanceOf(ConfigException.class)
                .hasMessage("redis.failure-policy: must be allow, deny or local, was 'maybe'");
        try (TollgateRuntime misspelt =
                TollgateRuntime.open(ConfigNode.of(Map.of("reddis", Map.of("uri", redisUri))))) {
            assertThat(misspelt.description()).isEqualTo("memory");
        }
    }

    @Test
    void connectToACluster() {
        try (RedisCluster cluster = RedisCluster.start(3)) {
            String seedUri = cluster.uris().get(0);
            String otherSeedUri = cluster.uris().get(1);

            // --- redis: cluster
            RedisRateLimiter limiter = RedisRateLimiter.builder()
                    .clusterUris(List.of(seedUri, otherSeedUri)) // any nodes; the rest are discovered
                    .build();
            // ---

            assertThat(limiter.tryAcquire("alice", perClient).allowed()).isTrue();
            limiter.close();
        }
    }

    @Test
    void shareTheApplicationsClient() {
        String redisUri = redis.server().uri();

        // --- redis: existing client
        RedisClient client = RedisClient.create(redisUri); // the application's own Lettuce client
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .client(client) // opens one connection on it, closed with the limiter
                .keyPrefix("myapp:limits:")
                .timeout(Duration.ofMillis(200))
                .build();
        // ---

        limiter.tryAcquire("alice", perClient);
        assertThat(redis.server().command("EXISTS", "myapp:limits:per-client:alice"))
                .isEqualTo(1L);
        limiter.close();
        client.shutdown();
    }

    @Test
    void batching() {
        String redisUri = redis.server().uri();
        redis.server().command("DEL", "tollgate:per-client:alice"); // other examples use alice too

        // --- redis: batching
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redisUri) // batching is on unless .batching(false)
                .build();

        List<CompletableFuture<Decision>> burst = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            burst.add(limiter.tryAcquireAsync("alice", perClient, 1).toCompletableFuture());
        }
        // exactly 10 of the 20 pass (the capacity), and they are the first 10 sent
        // ---

        List<Boolean> allowed =
                burst.stream().map(decision -> decision.join().allowed()).toList();
        assertThat(allowed.subList(0, 10)).containsOnly(true);
        assertThat(allowed.subList(10, 20)).containsOnly(false);
        limiter.close();
    }

    @Test
    void leaseAHotKey() {
        String redisUri = redis.server().uri();
        long callsBefore = redis.server().commandCalls("evalsha");

        // --- redis: leases
        Policy search = Policy.of("search", Limit.of(10_000_000, Rate.perSecond(1_000_000)));
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redisUri)
                .leases("search") // or "*" for every policy
                .build();

        long decisions = 0;
        long until = System.nanoTime() + 300_000_000L; // 300 ms of requests, one after another
        while (System.nanoTime() < until) {
            limiter.tryAcquire("partner-42", search); // after the first 100 ms: answered from a lease
            decisions++;
        }
        long held = limiter.leasedTokens("partner-42", search); // taken from Redis ahead, not used yet
        limiter.close(); // gives back what the leases hold
        // ---

        // The example runs for a time, not a count: its first 100 ms go to Redis whatever the machine's speed,
        // and the rest come from leases as long as the key is hot (1 000 a second; one caller on Redis makes
        // several thousand here even with both cores busy), so most of its decisions make no script call
        assertThat(redis.server().commandCalls("evalsha") - callsBefore)
                .as("script calls for %d decisions, most answered from leases", decisions)
                .isLessThan(decisions / 2);
        assertThat(held).as("a slice is at most half the capacity").isBetween(0L, 5_000_000L);
        try (RedisRateLimiter reader = RedisRateLimiter.builder().uri(redisUri).build()) {
            assertThat(reader.inspect("partner-42", search).tokens())
                    .as("what the lease did not use is back")
                    .isGreaterThanOrEqualTo(10_000_000 - decisions);
        }
    }

    @Test
    void decideWithoutBlocking() throws Exception {
        try (RedisRateLimiter limiter =
                RedisRateLimiter.builder().uri(redis.server().uri()).build()) {
            CompletableFuture<String> answered = new CompletableFuture<>();

            // --- redis: async
            limiter.tryAcquireAsync("alice", perClient, 1).thenAccept(decision -> {
                if (decision.degraded()) { // Redis could not decide in time; the failure policy did
                    System.out.println("degraded: " + decision.degradation().detail());
                }
                answered.complete(
                        decision.allowed()
                                ? "200"
                                : "429, retry in " + decision.retryAfter().toSeconds() + " s");
            });
            // ---

            assertThat(answered.get(5, TimeUnit.SECONDS)).isEqualTo("200");
        }
    }

    @Test
    void configureResilience() {
        String redisUri = redis.server().uri();
        MeterRegistry meterRegistry = new SimpleMeterRegistry();

        // --- resilience
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redisUri)
                .timeout(Duration.ofMillis(30)) // the budget of every decision
                .failurePolicy(FailurePolicy.LOCAL) // the default: this instance keeps limiting on its own
                .expectedInstances(3) // ... to a third of each limit (by default: its share of the live instances)
                .failurePolicy("login", FailurePolicy.DENY) // but never let logins through unchecked
                .metrics(MicrometerMetrics.of(meterRegistry))
                .build();
        // ---

        redis.server().kill();
        try {
            Decision login = limiter.tryAcquire("alice", Policy.of("login", Limit.of(5, Rate.perMinute(5))));
            Decision api = limiter.tryAcquire("alice", Policy.of("api", Limit.of(9, Rate.perSecond(3))));

            assertThat(login.allowed()).isFalse();
            assertThat(login.degradation().fallback()).isEqualTo(FailurePolicy.DENY);
            assertThat(api.allowed()).isTrue();
            assertThat(api.degradation().fallback()).isEqualTo(FailurePolicy.LOCAL);
            assertThat(api.limit()).as("a third of the limit").isEqualTo(Limit.of(3, Rate.perSecond(1)));
            assertThat(meterRegistry.find("tollgate.decisions").counters()).isNotEmpty();
        } finally {
            limiter.close();
            redis.server().restart();
        }
    }

    @Test
    void everyJavaExampleOfTheRedisPagesIsRunHere() {
        int examples = DocumentationExamples.assertRunBy(
                "tollgate-redis/src/test/java/io/tollgate/redis/RedisDocumentationExamplesTest.java",
                "docs/redis.md",
                "docs/resilience.md");

        assertThat(examples).isEqualTo(8);
    }
}
