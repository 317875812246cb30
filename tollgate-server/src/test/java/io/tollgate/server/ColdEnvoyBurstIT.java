package io.tollgate.server;

import static io.tollgate.server.EnvoyRateLimitServiceTest.descriptor;
import static io.tollgate.server.EnvoyRateLimitServiceTest.request;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.Code;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.TestDepth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an Envoy user sees on the first calls: two server jars started cold on one healthy Redis with an
 * envoyproxy/ratelimit file of 20 per hour for one descriptor, and, as soon as both say they listen, 40
 * concurrent {@code ShouldRateLimit} calls, 20 to each. Exactly 20 are OK, in every run with fresh
 * servers: the warm-up runs the gRPC path before the servers say they listen, so that no first call outlasts
 * the budget, and none is decided by the failure policy.
 */
@Order(2) // after the jar's tests, once the modules beside the server are done
@Timeout(3600) // the deep run: 80 runs of about 30 s
class ColdEnvoyBurstIT {

    /** One run in the usual build; the deep run ({@code -Pdeep}) catches what happens once in dozens. */
    private static final int RUNS = TestDepth.runs(1, 80);

    private static final int LIMIT = 20;
    private static final int CALLS = 40;
    private static final Pattern RLS = Pattern.compile("tollgate envoy rls listening on ([^:]+):(\\d+)");

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @TempDir
    Path dir;

    @Test
    void twoColdServersAdmitExactlyTheLimitOfABurstOnTheirFirstCalls() throws Exception {
        Path limits = Files.createDirectories(dir.resolve("ratelimit"));
        Files.writeString(limits.resolve("sms.yaml"), """
                domain: sms
                descriptors:
                  - key: to_number
                    rate_limit:
                      unit: hour
                      requests_per_unit: %d
                """.formatted(LIMIT));
        Path config = Files.writeString(
                dir.resolve("tollgate.yaml"), """
                redis:
                  uri: %s
                envoy:
                  port: 0
                  host: 127.0.0.1
                  config: %s
                """.formatted(redis.server().uri(), limits));

        List<String> runs = new ArrayList<>();
        for (int run = 0; run < RUNS; run++) {
            redis.server().command("FLUSHALL");
            runs.add(run(config));
        }

        System.out.println("two cold servers, " + CALLS + " calls on a limit of " + LIMIT + ": " + runs);
        assertThat(runs).allSatisfy(run -> assertThat(run).startsWith(LIMIT + " OK, " + (CALLS - LIMIT) + " over"));
    }

    /** Starts two servers at once, cold, sends the burst as soon as both listen, and stops them. */
    private String run(Path config) throws Exception {
        List<CompletableFuture<ServerProcess>> starting = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return ServerProcess.start(config);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        List<ManagedChannel> channels = new ArrayList<>();
        ExecutorService callers = Executors.newFixedThreadPool(CALLS);
        try {
            List<RateLimitServiceGrpc.RateLimitServiceBlockingStub> stubs = new ArrayList<>();
            List<ServerProcess> servers = new ArrayList<>();
            for (CompletableFuture<ServerProcess> server : starting) {
                servers.add(server.join());
            }
            for (ServerProcess server : servers) {
                ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", rlsPort(server))
                        .usePlaintext()
                        .build();
                channels.add(channel);
                stubs.add(RateLimitServiceGrpc.newBlockingStub(channel));
            }
            RateLimitRequest number = request("sms", descriptor("to_number", "2065550100"));
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Code>> codes = new ArrayList<>();
            for (int i = 0; i < CALLS; i++) {
                RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = stubs.get(i % 2);
                codes.add(callers.submit(() -> {
                    go.await();
                    return stub.withDeadlineAfter(20, TimeUnit.SECONDS)
                            .shouldRateLimit(number)
                            .getOverallCode();
                }));
            }
            go.countDown();
            int ok = 0;
            int over = 0;
            for (Future<Code> code : codes) {
                if (code.get() == Code.OK) {
                    ok++;
                } else if (code.get() == Code.OVER_LIMIT) {
                    over++;
                }
            }
            List<String> degraded = new ArrayList<>();
            for (ServerProcess server : servers) {
                for (String line : server.err().split("\n")) {
                    if (line.contains("degraded") || line.contains("unavailable")) {
                        degraded.add(line);
                    }
                }
            }
            return ok + " OK, " + over + " over" + (degraded.isEmpty() ? "" : " " + degraded);
        } finally {
            callers.shutdownNow();
            channels.forEach(ManagedChannel::shutdownNow);
            for (CompletableFuture<ServerProcess> server : starting) {
                ServerProcess started =
                        server.handle((process, failure) -> process).join();
                if (started != null) {
                    started.close();
                }
            }
        }
    }

    /** The port from the server's {@code tollgate envoy rls listening on} line, printed before it listens on HTTP. */
    private static int rlsPort(ServerProcess server) {
        for (String line : server.out()) {
            Matcher listening = RLS.matcher(line);
            if (listening.matches()) {
                return Integer.parseInt(listening.group(2));
            }
        }
        throw new IllegalStateException("no 'tollgate envoy rls listening on' line in " + server.out());
    }
}
