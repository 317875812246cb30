package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.tollgate.Decision;
import io.tollgate.DocumentationExamples;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runs the Java examples of docs/redis.md, each written out exactly as the page shows it; the last test
 * fails if the page shows code that is not in this file.
 */
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
    void decideWithoutBlocking() throws Exception {
        try (RedisRateLimiter limiter =
                RedisRateLimiter.builder().uri(redis.server().uri()).build()) {
            CompletableFuture<String> answered = new CompletableFuture<>();

            // --- redis: async
            limiter.tryAcquireAsync("alice", perClient, 1).whenComplete((decision, failure) -> {
                if (failure != null) {
                    answered.complete("503: " + failure.getMessage()); // Redis down or too slow
                } else if (decision.allowed()) {
                    answered.complete("200");
                } else {
                    answered.complete("429, retry in " + decision.retryAfter().toSeconds() + " s");
                }
            });
            // ---

            assertThat(answered.get(5, TimeUnit.SECONDS)).isEqualTo("200");
        }
    }

    @Test
    void everyJavaExampleOfTheRedisPageIsRunHere() {
        int examples = DocumentationExamples.assertRunBy(
                "tollgate-redis/src/test/java/io/tollgate/redis/RedisDocumentationExamplesTest.java", "docs/redis.md");

        assertThat(examples).isEqualTo(4);
    }
}
