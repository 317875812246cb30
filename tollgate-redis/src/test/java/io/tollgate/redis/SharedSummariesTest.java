package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spi.SummaryExchange;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The summaries of who is limited that instances share through Redis ({@code summaries.lua}): each reads the
 * others' and not its own, one that closes withdraws its own, one that stopped publishing drops out, and all of
 * it is one key, which Redis Cluster serves from one node.
 */
@Timeout(60)
@Isolated // its bounds on time need the machine to itself
class SharedSummariesTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeEach
    void emptyRedis() {
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    @Test
    void eachInstanceReadsTheOthersSummariesAndNotItsOwn() throws Exception {
        SummaryExchange one = share(limiter(redis.server().uri()), "one");
        SummaryExchange other = share(limiter(redis.server().uri()), "other");

        assertThat(awaitOthers(one, 1)).containsExactly("other");
        assertThat(awaitOthers(other, 1)).containsExactly("one");
    }

    @Test
    void anInstanceThatClosesWithdrawsItsSummaries() throws Exception {
        SummaryExchange one = share(limiter(redis.server().uri()), "one");
        SummaryExchange other = share(limiter(redis.server().uri()), "other");
        awaitOthers(one, 1);

        other.close();

        assertThat(read(one)).isEmpty();
    }

    @Test
    void summariesThatRanOutAreNotReadAndAreRemoved() throws Exception {
        SummaryExchange one = share(limiter(redis.server().uri()), "one");
        String key = "tollgate:top-keys/summaries";
        awaitOwnSummaries(key); // published on a thread of its own: the key must hold them before the ghost comes
        redis.server().command("HSET", key, "ghost", "stale", "ghost/until", "1");

        List<String> others = read(one);

        assertThat(others).isEmpty();
        assertThat(redis.server().command("HEXISTS", key, "ghost")).isEqualTo(0L);
        assertThat((Long) redis.server().command("PTTL", key))
                .as("the key expires with the last summaries in it, rounded up to the millisecond")
                .isBetween(1L, SharedSummaries.LASTS.toMillis() + 1);
    }

    @Test
    void worksOnRedisClusterWhereTheSummariesAreOneKey() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3)) {
            SummaryExchange one = share(clusterLimiter(cluster), "one");
            SummaryExchange other = share(clusterLimiter(cluster), "other");

            assertThat(awaitOthers(one, 1)).containsExactly("other");
            assertThat(awaitOthers(other, 1)).containsExactly("one");
            close(); // before the cluster stops
            opened.clear();
        }
    }

    private RedisRateLimiter limiter(String uri) {
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(uri)
                .timeout(Duration.ofSeconds(1))
                .build();
        opened.add(limiter);
        return limiter;
    }

    private RedisRateLimiter clusterLimiter(RedisCluster cluster) {
        RedisRateLimiter limiter = Connections.connected(RedisRateLimiter.builder()
                .clusterUris(cluster.uris())
                .timeout(Duration.ofSeconds(1))
                .build());
        opened.add(limiter);
        return limiter;
    }

    private SummaryExchange share(RedisRateLimiter limiter, String summaries) {
        SummaryExchange exchange = limiter.shareSummaries(() -> summaries.getBytes(StandardCharsets.UTF_8));
        opened.add(exchange);
        return exchange;
    }

    private static List<String> read(SummaryExchange exchange) throws Exception {
        List<String> others = new ArrayList<>();
        for (byte[] summaries : exchange.others().get(5, TimeUnit.SECONDS)) {
            others.add(new String(summaries, StandardCharsets.UTF_8));
        }
        return others;
    }

    /** Waits until the instance's own summaries, and the time they last until, are in {@code key}. */
    private static void awaitOwnSummaries(String key) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((Long) redis.server().command("HLEN", key) < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat((Long) redis.server().command("HLEN", key))
                .as("the instance's own summaries")
                .isGreaterThanOrEqualTo(2L);
    }

    /** Reads until {@code count} others are there: each publishes at once, on a thread of its own. */
    private static List<String> awaitOthers(SummaryExchange exchange, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        List<String> others = read(exchange);
        while (others.size() != count && System.nanoTime() < deadline) {
            Thread.sleep(50);
            others = read(exchange);
        }
        return others;
    }
}
