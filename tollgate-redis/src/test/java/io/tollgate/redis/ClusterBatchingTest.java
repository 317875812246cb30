package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Batching on a real three-master Redis Cluster whose masters the tests freeze (SIGSTOP), so that requests
 * pile up: a batch holds the keys of every slot of one master, and goes again slot by slot when the master
 * no longer serves one of them.
 */
@Timeout(120)
@Isolated // its bounds on batches need the machine to itself
class ClusterBatchingTest {

    private static final Policy TEN = Policy.of("ten", Limit.of(10, Rate.perHour(10)));

    private RedisCluster cluster;
    private RedisRateLimiter limiter;

    @BeforeEach
    void start() {
        cluster = RedisCluster.start(3);
        limiter = Connections.connected(RedisRateLimiter.builder()
                .clusterUris(cluster.uris())
                .timeout(Duration.ofSeconds(5))
                .denyCache(0)
                .batching(true)
                .build());
        for (int i = 0; i < 30; i++) {
            limiter.tryAcquire("warm-up-" + i, TEN); // every master connected, scripts cached
        }
    }

    @AfterEach
    void stop() {
        limiter.close();
        cluster.close();
    }

    @Test
    void keysOfManySlotsOnOneMasterShareAScriptCall() throws Exception {
        long callsBefore = scriptCalls();

        cluster.masters().forEach(RedisServer::pause);
        List<CompletableFuture<Decision>> burst = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            burst.add(limiter.tryAcquireAsync("key-" + i, TEN, 3).toCompletableFuture());
        }
        TimeUnit.MILLISECONDS.sleep(200);
        cluster.masters().forEach(RedisServer::resume);

        assertThat(burst.stream().map(CompletableFuture::join)).allSatisfy(decision -> {
            assertThat(decision.degraded()).isFalse();
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(7);
        });
        // Per master: the first two went at once, one each; the rest waited and went as one batch.
        assertThat(scriptCalls() - callsBefore)
                .as("script calls for 300 keys of about 300 slots on 3 masters")
                .isLessThanOrEqualTo(3L * (DecisionBatcher.MAX_IN_FLIGHT + 1));
        for (int i = 0; i < 300; i++) {
            assertThat(limiter.tryAcquire("key-" + i, TEN).remaining()).isEqualTo(6);
        }
    }

    @Test
    void aBatchForAMasterThatNoLongerServesASlotGoesAgainSlotBySlot() throws Exception {
        RedisServer from = cluster.masters().get(0);
        RedisServer to = cluster.masters().get(1);
        String tag = tagServedBy(from);
        int slot = RedisCluster.slot(tag);
        List<String> moved = List.of("{" + tag + "}-1", "{" + tag + "}-2", "{" + tag + "}-3");
        List<String> stay = new ArrayList<>();
        for (int i = 0; stay.size() < 40; i++) {
            int own = RedisCluster.slot("tollgate:ten:stay-" + i);
            if (own != slot && cluster.masterForSlot(own) == from) {
                stay.add("stay-" + i);
            }
        }
        moveEmptySlot(slot, from, to); // the client still thinks `from` serves it

        from.pause();
        List<CompletableFuture<Decision>> first = submit(stay.subList(0, 2)); // on their way, alone
        List<CompletableFuture<Decision>> mixed = submit(interleaved(stay.subList(2, 40), moved));
        TimeUnit.MILLISECONDS.sleep(200);
        from.resume();

        assertThat(first.stream().map(CompletableFuture::join)).allMatch(Decision::allowed);
        assertThat(mixed.stream().map(CompletableFuture::join)).allSatisfy(decision -> {
            assertThat(decision.degraded())
                    .as("degraded: %s", decision.degradation())
                    .isFalse();
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(9);
        });
        for (String key : moved) {
            assertThat(to.command("EXISTS", "tollgate:ten:" + key)).as(key).isEqualTo(1L);
            assertThat(limiter.tryAcquire(key, TEN).remaining()).isEqualTo(8);
        }
        for (String key : stay) {
            assertThat(limiter.tryAcquire(key, TEN).remaining()).isEqualTo(8);
        }
    }

    private List<CompletableFuture<Decision>> submit(List<String> keys) {
        return keys.stream()
                .map(key -> limiter.tryAcquireAsync(key, TEN, 1).toCompletableFuture())
                .toList();
    }

    private static List<String> interleaved(List<String> many, List<String> few) {
        List<String> keys = new ArrayList<>(many);
        for (int i = 0; i < few.size(); i++) {
            keys.add(1 + i * (many.size() / few.size()), few.get(i));
        }
        return keys;
    }

    private String tagServedBy(RedisServer master) {
        for (int i = 0; ; i++) {
            if (cluster.masterForSlot(RedisCluster.slot("moved-" + i)) == master) {
                return "moved-" + i;
            }
        }
    }

    /** Reshards an empty slot as redis-cli does (MIGRATING, IMPORTING, then NODE everywhere), behind the client's back. */
    private void moveEmptySlot(int slot, RedisServer from, RedisServer to) {
        String fromId = (String) from.command("CLUSTER", "MYID");
        String toId = (String) to.command("CLUSTER", "MYID");
        String number = Integer.toString(slot);
        to.command("CLUSTER", "SETSLOT", number, "IMPORTING", fromId);
        from.command("CLUSTER", "SETSLOT", number, "MIGRATING", toId);
        to.command("CLUSTER", "SETSLOT", number, "NODE", toId);
        from.command("CLUSTER", "SETSLOT", number, "NODE", toId);
        for (RedisServer other : cluster.masters()) {
            if (other != from && other != to) {
                other.command("CLUSTER", "SETSLOT", number, "NODE", toId);
            }
        }
    }

    private long scriptCalls() {
        long calls = 0;
        for (RedisServer master : cluster.masters()) {
            calls += master.commandCalls("evalsha") + master.commandCalls("eval");
        }
        return calls;
    }
}
