package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisExtension;
import io.tollgate.top.KeyDisplay;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Who is limited across servers on one Redis: each publishes its counts, and each one's {@code /admin/top} merges
 * every live server's, so a client spread over the fleet is seen whole, and a key only another server refused
 * can be reset by its digest here.
 */
@Timeout(120)
class TopKeysAcrossServersTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final List<RunningServer> servers = new ArrayList<>();

    @BeforeEach
    void emptyRedis() {
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void stop() {
        servers.forEach(RunningServer::close);
        redis.server().heal();
    }

    private RunningServer start() throws Exception {
        RunningServer server = RunningServer.start("""
                redis:
                  uri: %s
                  timeout: 100ms
                policies:
                  per-client:
                    limits:
                      - capacity: 5
                        refill: 1/h
                top-keys:
                  enabled: true
                  show: whole
                server:
                  management-port: 0
                """.formatted(redis.server().uri()));
        servers.add(server);
        return server;
    }

    @Test
    void eachServerListsTheKeysRefusedAcrossEveryServerWithTheirCountsSummed() throws Exception {
        RunningServer one = start();
        RunningServer other = start();
        check(one, "spread", 12); // 5 admitted, 7 refused here
        check(other, "spread", 4); // 4 more refused there
        check(other, "only-there", 8); // 3 refused there

        String top = awaitTop(one, "\"key\":\"api:only-there\""); // the decision API's keys, under api:

        assertThat(top)
                .contains("\"total\":14,\"error_bound\":0,")
                .contains("\"instances\":2,")
                .contains(
                        "{\"key\":\"api:spread\",\"digest\":\"" + KeyDisplay.digest("api:spread") + "\",\"count\":11,")
                .contains("{\"key\":\"api:only-there\",\"digest\":\"" + KeyDisplay.digest("api:only-there")
                        + "\",\"count\":3,");
        HttpResponse<String> reset =
                one.management("DELETE", "/admin/buckets/per-client?digest=" + KeyDisplay.digest("api:only-there"));
        assertThat(reset.statusCode())
                .as("a key only the other server refused, reset here")
                .isEqualTo(204);
        // the reset's announcement ends the refusal the other server cached, within moments (10 s: when to give up)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int status;
        while ((status = check(other, "only-there", 1)) == 429 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(status).isEqualTo(200);
    }

    @Test
    void aServerThatStopsDropsOutAndWithoutRedisEachListsItsOwn() throws Exception {
        RunningServer one = start();
        RunningServer other = start();
        check(other, "gone", 7);
        awaitTop(one, "\"key\":\"api:gone\"");

        other.close();
        servers.remove(other);
        String afterStop = one.management("GET", "/admin/top?policy=per-client").body();
        check(one, "mine", 6);
        redis.server().kill();
        String withoutRedis =
                one.management("GET", "/admin/top?policy=per-client").body();

        assertThat(afterStop)
                .as("it withdrew its counts as it stopped")
                .contains("\"instances\":1,")
                .doesNotContain("gone");
        assertThat(withoutRedis)
                .contains("\"instances\":1,")
                .contains("\"detail\":\"This server's counts only: the other servers' could not be read: ")
                .contains("\"key\":\"api:mine\"");
    }

    /** Waits until {@code server}'s top lists {@code expected}: the others publish every few seconds. */
    private static String awaitTop(RunningServer server, String expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        String top;
        do {
            top = server.management("GET", "/admin/top?policy=per-client").body();
            if (top.contains(expected)) {
                return top;
            }
            Thread.sleep(200);
        } while (System.nanoTime() < deadline);
        return top;
    }

    private static int check(RunningServer server, String key, int times) {
        int status = 0;
        for (int i = 0; i < times; i++) {
            status = server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"" + key + "\"}")
                    .statusCode();
        }
        return status;
    }
}
