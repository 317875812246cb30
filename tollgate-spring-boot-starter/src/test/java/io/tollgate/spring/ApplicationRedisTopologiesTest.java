package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.Eventually;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The application's Redis, configured only with Boot's spring.data.redis.*, in each topology: the limiter
 * shares the connection factory's client and decides in that Redis.
 */
@Timeout(120)
class ApplicationRedisTopologiesTest {

    private static final Policy ONE = Policy.of("one", Limit.of(1, Rate.perHour(1)));

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(DataRedisAutoConfiguration.class, TollgateAutoConfiguration.class));

    @Test
    void aClusterIsShared() {
        try (RedisCluster cluster = RedisCluster.start(3)) {
            runner.withPropertyValues("spring.data.redis.cluster.nodes=" + String.join(",", hostPorts(cluster)))
                    .run(context -> {
                        RateLimiter limiter = context.getBean(RateLimiter.class);
                        assertThat(limiter).isInstanceOf(RedisRateLimiter.class);
                        awaitConnected((RedisRateLimiter) limiter);
                        assertThat(limiter.tryAcquire("alice", ONE).allowed()).isTrue();
                        assertThat(limiter.tryAcquire("alice", ONE).allowed()).isFalse();
                        assertThat(limiter.tryAcquire("alice", ONE).degraded()).isFalse();
                        assertThat(context.getBean(StringRedisTemplate.class).hasKey("tollgate:one:alice"))
                                .isTrue();
                    });
        }
    }

    @Test
    void aSentinelMasterIsShared() {
        try (RedisServer master = RedisServer.start();
                RedisServer sentinel = RedisServer.startSentinel(master, "mymaster")) {
            runner.withPropertyValues(
                            "spring.data.redis.sentinel.master=mymaster",
                            "spring.data.redis.sentinel.nodes=127.0.0.1:" + sentinel.port())
                    .run(context -> {
                        RateLimiter limiter = context.getBean(RateLimiter.class);
                        assertThat(limiter).isInstanceOf(RedisRateLimiter.class);
                        awaitConnected((RedisRateLimiter) limiter);
                        assertThat(limiter.tryAcquire("bob", ONE).allowed()).isTrue();
                        assertThat(limiter.tryAcquire("bob", ONE).allowed()).isFalse();
                        assertThat(master.command("EXISTS", "tollgate:one:bob")).isEqualTo(1L);
                    });
        }
    }

    /**
     * Waits until the limiter answers a ping (every master, on a cluster): on a busy machine the handshake may outlast
     * the limiter's first wait, and a limiter not connected yet decides by its failure policy, which these tests are
     * not about.
     */
    private static void awaitConnected(RedisRateLimiter limiter) {
        Eventually.noProblem(
                () -> limiter.ping().toCompletableFuture().join(), Duration.ofSeconds(30), "the limiter connects");
    }

    private static String[] hostPorts(RedisCluster cluster) {
        return cluster.uris().stream()
                .map(uri -> uri.substring("redis://".length()))
                .toArray(String[]::new);
    }
}
