package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.server.internal.envoy.proto.BucketId;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaResponse.BucketAction;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaServiceGrpc;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaUsageReports;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.tollgate.server.internal.envoy.proto.RateLimitStrategy;
import io.tollgate.testing.RedisExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Envoy's rate limit quota service, driven as Envoy's {@code rate_limit_quota} filter drives it (Envoy itself
 * cannot run here): a client of the service generated from the same protocol keeps a stream open, spends each
 * assignment as Envoy does (a token bucket that starts full; deny all without an assignment or once it expired),
 * and reports what it allowed and denied every interval.
 */
@Timeout(60)
class RateLimitQuotaServiceTest {

    /** A bucket of 100 that refills 50 a second; Envoys report every 200 ms. */
    private static final String FILE = """
            policies:
              per-tenant:
                limits:
                  - capacity: 100
                    refill: 50/s
            envoy:
              port: 0
              host: 127.0.0.1
              quota:
                policy: per-tenant
                report-interval: 200ms
                assignment-ttl: 400ms
                abandon-after: %s
            """;

    private static final BucketId TENANT =
            BucketId.newBuilder().putBucket("tenant", "acme").build();

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @TempDir
    Path dir;

    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    @Test
    void twoEnvoysOnOneBucketAdmitWhatTheBucketGrantsNotTwiceIt() throws Exception {
        RunningServer server = start("1m");

        admitWhatTheBucketGrants(new SimulatedEnvoy(server, "envoy"), new SimulatedEnvoy(server, "envoy"));
    }

    @Test
    void twoEnvoysOnTwoServersSharingARedisAdmitWhatTheBucketGrants() throws Exception {
        String withRedis = "redis: {uri: '" + redis.server().uri() + "'}\n" + FILE.formatted("1m");
        Files.writeString(dir.resolve("one.yaml"), withRedis);
        Files.writeString(dir.resolve("two.yaml"), withRedis);

        admitWhatTheBucketGrants(
                new SimulatedEnvoy(startedCold(dir.resolve("one.yaml")), "envoy"),
                new SimulatedEnvoy(startedCold(dir.resolve("two.yaml")), "envoy"));
    }

    private static void admitWhatTheBucketGrants(SimulatedEnvoy first, SimulatedEnvoy second) throws Exception {
        long started = System.nanoTime();

        // Each Envoy is asked 100 times a second for 3 s: four times the refill rate between them
        for (int tick = 0; tick < 300; tick++) {
            first.request(TENANT);
            second.request(TENANT);
            if (tick % 20 == 19) {
                first.report();
                second.report();
            }
            Thread.sleep(10);
        }
        double seconds = (System.nanoTime() - started) / 1e9;

        long admitted = first.allowed() + second.allowed();
        long mostTheBucketGrants = 100 + (long) Math.ceil(50 * (seconds + 1)); // +1 s: slices taken ahead
        assertThat(admitted).as("admitted by both").isLessThanOrEqualTo(mostTheBucketGrants);
        assertThat(admitted).as("admitted by both, not starved").isGreaterThan(mostTheBucketGrants / 3);
        assertThat(first.allowed()).as("the first Envoy's part").isPositive();
        assertThat(second.allowed()).as("the second Envoy's part").isPositive();
    }

    @Test
    void aBucketThatReportsNoRequestsIsAbandoned() throws Exception {
        SimulatedEnvoy envoy = new SimulatedEnvoy(start("300ms"), "envoy");
        envoy.request(TENANT);
        envoy.report();

        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!envoy.abandoned(TENANT) && System.nanoTime() < until) {
            envoy.report(); // nothing asked since: the bucket is idle
            Thread.sleep(100);
        }

        assertThat(envoy.abandoned(TENANT)).isTrue();
    }

    @Test
    void aStreamThatEndsIsForgottenAndANewOneIsAnsweredAfresh() throws Exception {
        RunningServer server = start("1m");
        SimulatedEnvoy before = new SimulatedEnvoy(server, "envoy");
        before.report(TENANT);
        before.awaitAssignment(TENANT);
        before.end();

        SimulatedEnvoy after = new SimulatedEnvoy(server, "envoy");
        after.report(TENANT);

        assertThat(after.awaitAssignment(TENANT).getRateLimitStrategy().hasTokenBucket())
                .isTrue();
    }

    @Test
    void aStoppingServerEndsItsStreamsRatherThanWaitingForThem() throws Exception {
        RunningServer server = start("1m");
        SimulatedEnvoy envoy = new SimulatedEnvoy(server, "envoy");
        envoy.report(TENANT);
        envoy.awaitAssignment(TENANT);

        long stopping = System.nanoTime();
        opened.remove(server);
        server.close();

        assertThat(envoy.ended.get(5, TimeUnit.SECONDS))
                .as("ended without an error")
                .isNull();
        assertThat(Duration.ofNanos(System.nanoTime() - stopping)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aStreamWhoseFirstReportNamesNoDomainIsRefused() throws Exception {
        SimulatedEnvoy envoy = new SimulatedEnvoy(start("1m"), "");
        envoy.report(TENANT);

        assertThat(envoy.endedWith().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    }

    @Test
    void whereCallersAreNamedAStreamWithoutATokenIsRefused() throws Exception {
        Path file = dir.resolve("callers.yaml");
        Files.writeString(file, FILE.formatted("1m") + "callers:\n  - name: edge\n    token: a-long-token\n");
        SimulatedEnvoy envoy = new SimulatedEnvoy(started(file), "envoy");
        envoy.report(TENANT);

        Status ended = envoy.endedWith();
        assertThat(ended.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(ended.getDescription())
                .isEqualTo("the rate limit quota service needs a caller's bearer token in the authorization metadata:"
                        + " Bearer TOKEN");
    }

    @Test
    void aCallerThatNamesAnotherTenantsBucketIsRefusedAndTakesNothing() throws Exception {
        Path file = dir.resolve("tenants.yaml");
        Files.writeString(
                file,
                FILE.formatted("1m")
                        + "callers:\n  - name: edge\n    token: edge-token\n    key-prefix: \"envoy:tenant=acme\"\n"
                        + "server:\n  management-port: 0\n");
        RunningServer server = started(file);
        SimulatedEnvoy acme = new SimulatedEnvoy(server, "envoy", "edge-token");
        acme.report(TENANT);
        acme.awaitAssignment(TENANT);
        SimulatedEnvoy other = new SimulatedEnvoy(server, "envoy", "edge-token");

        other.report(BucketId.newBuilder().putBucket("tenant", "globex").build());

        Status ended = other.endedWith();
        assertThat(ended.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(ended.getDescription()).contains("envoy:tenant=acme");
        assertThat(server.management("GET", "/admin/buckets/per-tenant/envoy%3Atenant%3Dglobex")
                        .body())
                .as("the other tenant's bucket, untouched")
                .contains("\"stored\":false");
        assertThat(server.management("GET", "/admin/buckets/per-tenant/envoy%3Atenant%3Dacme")
                        .body())
                .as("the caller's own bucket, charged for its assignment")
                .contains("\"stored\":true");
    }

    @Test
    void aStreamThatNamesBucketAfterBucketIsStopped() throws Exception {
        SimulatedEnvoy envoy = new SimulatedEnvoy(start("1m"), "envoy");
        List<BucketId> many = new ArrayList<>();
        for (int i = 0; i <= 10_000; i++) {
            many.add(BucketId.newBuilder().putBucket("tenant", "t" + i).build());
        }
        envoy.report(many);

        Status ended = envoy.endedWith();
        assertThat(ended.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(ended.getDescription()).isEqualTo("a stream may report at most 10000 buckets");
    }

    @Test
    void aServerWithoutAQuotaSectionSaysSo() throws Exception {
        Path file = dir.resolve("rls.yaml");
        Path limits = dir.resolve("limits.yaml");
        Files.writeString(
                limits,
                "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n");
        Files.writeString(file, "envoy: {port: 0, host: 127.0.0.1, config: " + limits + "}\n");
        SimulatedEnvoy envoy = new SimulatedEnvoy(started(file), "envoy");
        envoy.report(TENANT);

        Status ended = envoy.endedWith();
        assertThat(ended.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(ended.getDescription()).contains("envoy.quota");
    }

    @Test
    void aQuotaSectionNamingAnUnknownPolicyIsRefusedAtTheStart() {
        Path file = dir.resolve("bad.yaml");

        assertThatThrownBy(() -> {
                    Files.writeString(file, FILE.formatted("1m").replace("policy: per-tenant", "policy: nobody"));
                    ServerConfig.load(file);
                })
                .hasMessageContaining("envoy.quota.policy: unknown policy 'nobody'; defined: per-tenant");
    }

    @Test
    void theEnvoyPagesQuotaExampleIsReadAsItIs() throws Exception {
        String example = DocumentationExamples.blocks("docs/envoy.md", "yaml").stream()
                .filter(block -> block.contains("quota:"))
                .findFirst()
                .orElseThrow();

        ServerConfig config = ServerConfig.parse(example, "envoy.md");

        assertThat(config.envoy().setup().quota().policy().name()).isEqualTo("per-tenant");
        assertThat(config.envoy().setup().quota().assignmentTimeToLive()).isEqualTo(Duration.ofSeconds(2));
        assertThat(config.envoy().config()).as("no rate limit files needed").isNull();
    }

    private RunningServer start(String abandonAfter) throws Exception {
        Path file = dir.resolve("quota.yaml");
        Files.writeString(file, FILE.formatted(abandonAfter));
        return started(file);
    }

    private RunningServer started(Path file) throws Exception {
        RunningServer server = RunningServer.start(ServerConfig.load(file).withPort(0));
        opened.add(server);
        return server;
    }

    /** Starts a server without its warm-up: what is measured here is the quota, not the first calls' speed. */
    private RunningServer startedCold(Path file) throws Exception {
        RunningServer server = RunningServer.startCold(Files.readString(file));
        opened.add(server);
        return server;
    }

    /** One Envoy's filter, on one stream. */
    private final class SimulatedEnvoy {
        private final String domain;
        private final StreamObserver<RateLimitQuotaUsageReports> reports;
        private final List<BucketAction> actions = new CopyOnWriteArrayList<>();
        final CompletableFuture<Throwable> ended = new CompletableFuture<>();
        private boolean namedDomain;
        /** The active assignment's tokens, or -1 without one (deny all); guarded by this. */
        private long tokens = -1;

        private long expiresNanos;
        private long allowedSinceReport;
        private long deniedSinceReport;
        private long allowed;
        private long lastReportNanos = System.nanoTime();

        SimulatedEnvoy(RunningServer server, String domain) {
            this(server, domain, null);
        }

        /** An Envoy that names itself by {@code token} (a caller's), or by nothing where it is null. */
        SimulatedEnvoy(RunningServer server, String domain, String token) {
            this.domain = domain;
            ManagedChannel channel = NettyChannelBuilder.forAddress(
                            "127.0.0.1", server.server().envoyPort())
                    .usePlaintext()
                    .build();
            opened.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
            RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub stub = RateLimitQuotaServiceGrpc.newStub(channel);
            if (token != null) {
                Metadata metadata = new Metadata();
                metadata.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
                stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(metadata));
            }
            reports = stub.streamRateLimitQuotas(new StreamObserver<>() {
                @Override
                public void onNext(RateLimitQuotaResponse response) {
                    for (BucketAction action : response.getBucketActionList()) {
                        apply(action);
                    }
                }

                @Override
                public void onError(Throwable failure) {
                    ended.complete(failure);
                }

                @Override
                public void onCompleted() {
                    ended.complete(null);
                }
            });
        }

        /** Applies an action as Envoy does: a different assignment replaces the active one, full. */
        private synchronized void apply(BucketAction action) {
            actions.add(action);
            if (action.hasAbandonAction()) {
                tokens = -1;
                return;
            }
            RateLimitStrategy strategy = action.getQuotaAssignmentAction().getRateLimitStrategy();
            com.google.protobuf.Duration ttl = action.getQuotaAssignmentAction().getAssignmentTimeToLive();
            expiresNanos = System.nanoTime() + ttl.getSeconds() * 1_000_000_000L + ttl.getNanos();
            tokens = strategy.hasTokenBucket() ? strategy.getTokenBucket().getMaxTokens() : 0;
        }

        /** One request matched into {@code bucket}: allowed if the active assignment has a token. */
        synchronized void request(BucketId bucket) {
            if (tokens > 0 && System.nanoTime() < expiresNanos) {
                tokens--;
                allowed++;
                allowedSinceReport++;
            } else {
                deniedSinceReport++;
            }
        }

        synchronized void report() {
            report(TENANT);
        }

        /** Reports the bucket's usage since the last report, as the filter does every interval. */
        synchronized void report(BucketId bucket) {
            report(List.of(bucket));
        }

        /** Reports the buckets' usage since the last report (what was asked counted for each). */
        synchronized void report(List<BucketId> buckets) {
            long now = System.nanoTime();
            long elapsed = Math.max(1, now - lastReportNanos);
            lastReportNanos = now;
            RateLimitQuotaUsageReports.Builder report = RateLimitQuotaUsageReports.newBuilder();
            for (BucketId bucket : buckets) {
                report.addBucketQuotaUsages(BucketQuotaUsage.newBuilder()
                        .setBucketId(bucket)
                        .setTimeElapsed(com.google.protobuf.Duration.newBuilder()
                                .setSeconds(elapsed / 1_000_000_000L)
                                .setNanos((int) (elapsed % 1_000_000_000L)))
                        .setNumRequestsAllowed(allowedSinceReport)
                        .setNumRequestsDenied(deniedSinceReport));
            }
            if (!namedDomain) {
                report.setDomain(domain);
                namedDomain = true;
            }
            allowedSinceReport = 0;
            deniedSinceReport = 0;
            reports.onNext(report.build());
        }

        synchronized long allowed() {
            return allowed;
        }

        boolean abandoned(BucketId bucket) {
            return actions.stream().anyMatch(a -> a.getBucketId().equals(bucket) && a.hasAbandonAction());
        }

        BucketAction.QuotaAssignmentAction awaitAssignment(BucketId bucket) throws InterruptedException {
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < until) {
                for (BucketAction action : actions) {
                    if (action.getBucketId().equals(bucket) && action.hasQuotaAssignmentAction()) {
                        return action.getQuotaAssignmentAction();
                    }
                }
                Thread.sleep(10);
            }
            throw new AssertionError("no assignment for " + bucket + " within 10 s");
        }

        void end() {
            reports.onCompleted();
        }

        /** Returns the status the service ended the stream with, waiting up to 10 s. */
        Status endedWith() throws Exception {
            return Status.fromThrowable(ended.get(10, TimeUnit.SECONDS));
        }
    }
}
