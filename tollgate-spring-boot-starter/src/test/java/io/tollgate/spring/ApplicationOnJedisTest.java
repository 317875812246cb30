package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

/**
 * An application on Jedis, Boot's other Redis client: the starter cannot share its connection factory, so it
 * reaches the same Redis, as spring.data.redis.* describes it, through a Lettuce client of its own, and the
 * limits are shared by every instance. Nothing falls silently back to per-instance memory; where the store is
 * stated, it is that store or no start.
 */
@Timeout(120)
class ApplicationOnJedisTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @BeforeAll
    static void password() {
        redis.server().command("CONFIG", "SET", "requirepass", "s3cret-pass"); // once started: its start pings
    }

    private static final Policy TWENTY = Policy.of("twenty", Limit.of(20, Rate.perHour(20)));

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, TollgateAutoConfiguration.class))
            .withPropertyValues(
                    "spring.data.redis.client-type=jedis",
                    "spring.data.redis.host=127.0.0.1",
                    "spring.data.redis.port=" + redis.server().port(),
                    "spring.data.redis.password=s3cret-pass");

    @Test
    void twoInstancesOnJedisShareOneLimitExactly() {
        runner.run(one -> runner.run(other -> {
            assertThat(one.getBean(RedisConnectionFactory.class)).isInstanceOf(JedisConnectionFactory.class);
            List<RateLimiter> limiters = List.of(one.getBean(RateLimiter.class), other.getBean(RateLimiter.class));
            for (RateLimiter limiter : limiters) {
                assertThat(limiter).isInstanceOf(RedisRateLimiter.class);
            }

            assertThat(admittedOf160(limiters))
                    .as("160 requests over two instances, one bucket of 20")
                    .isEqualTo(20);
        }));
    }

    /** Sends 160 requests for one key from 16 threads over {@code limiters} in turn; returns how many passed. */
    private static int admittedOf160(List<RateLimiter> limiters) throws InterruptedException {
        AtomicInteger admitted = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            RateLimiter limiter = limiters.get(t % limiters.size());
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                    for (int i = 0; i < 10; i++) {
                        if (limiter.tryAcquire("shared-key", TWENTY).allowed()) {
                            admitted.incrementAndGet();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            thread.start();
            threads.add(thread);
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        return admitted.get();
    }

    @Test
    void aSentinelMasterAndAClusterAreReachedAsTheirSettingsSay() {
        try (RedisServer master = RedisServer.start();
                RedisServer sentinel = RedisServer.startSentinel(master, "mymaster");
                RedisCluster cluster = RedisCluster.start(3)) {
            WebApplicationContextRunner jedis = new WebApplicationContextRunner()
                    .withConfiguration(
                            AutoConfigurations.of(DataRedisAutoConfiguration.class, TollgateAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.client-type=jedis");
            jedis.withPropertyValues(
                            "spring.data.redis.sentinel.master=mymaster",
                            "spring.data.redis.sentinel.nodes=127.0.0.1:" + sentinel.port())
                    .run(context -> {
                        RateLimiter limiter = context.getBean(RateLimiter.class);
                        assertThat(limiter.tryAcquire("bob", TWENTY).degraded()).isFalse();
                        assertThat(master.command("EXISTS", "tollgate:twenty:bob"))
                                .isEqualTo(1L);
                    });
            jedis.withPropertyValues("spring.data.redis.cluster.nodes="
                            + String.join(
                                    ",",
                                    cluster.uris().stream()
                                            .map(uri -> uri.substring("redis://".length()))
                                            .toList()))
                    .run(context -> {
                        RateLimiter limiter = context.getBean(RateLimiter.class);
                        assertThat(limiter.tryAcquire("carol", TWENTY).allowed())
                                .isTrue();
                        assertThat(limiter.tryAcquire("carol", TWENTY).degraded())
                                .isFalse();
                    });
        }
    }

    @Test
    void aStatedRedisThatCannotBeHadStopsTheStartSayingHow() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(TollgateAutoConfiguration.class))
                .withPropertyValues("tollgate.store=redis")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining(
                                "tollgate.store is redis, but there is no Redis to use: set" + " tollgate.redis.uri"));
    }

    @Test
    void aStatedMemoryKeepsTheBucketsInMemoryBesideTheApplicationsRedis() {
        runner.withPropertyValues("tollgate.store=memory")
                .run(context -> assertThat(context.getBean(RateLimiter.class)).isInstanceOf(InMemoryRateLimiter.class));
    }
}
