package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.UInt64Value;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tollgate.server.internal.envoy.ReadmeExamples;
import io.tollgate.server.internal.envoy.proto.HeaderValue;
import io.tollgate.server.internal.envoy.proto.RateLimitDescriptor;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.Code;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.DescriptorStatus;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.RateLimit.Unit;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import io.tollgate.testing.RedisExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Envoy's rate limit service, called as Envoy calls it: a grpc-java client over loopback, on the in-memory
 * store and on a real Redis, with envoyproxy/ratelimit's README examples written again as test data.
 */
@Timeout(120)
class EnvoyRateLimitServiceTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String MESSAGING = ReadmeExamples.MESSAGING;

    /** The README's per-IP example, with its blocked address, and the other kinds of descriptor. */
    private static final String EDGE = """
            domain: edge_proxy_per_ip
            descriptors:
              - key: remote_address
                rate_limit:
                  name: per_ip
                  unit: hour
                  requests_per_unit: 5
              - key: remote_address
                value: 50.0.0.5
                rate_limit:
                  unit: second
                  requests_per_unit: 0
              - key: remote_address
                value: 10.0.0.1
                rate_limit:
                  unlimited: true
              - key: generic_key
                value: watched
                shadow_mode: true
                rate_limit:
                  unit: hour
                  requests_per_unit: 1
              - key: generic_key
                value: scarce
                rate_limit:
                  unit: hour
                  requests_per_unit: 1
              - key: client
                tollgate_policy: per-client
            """;

    /** Everything a test decides against one store. */
    abstract static class Contract {

        @TempDir
        Path dir;

        final List<RunningServer> servers = new ArrayList<>();
        final List<ManagedChannel> channels = new ArrayList<>();
        RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;
        RunningServer server;

        /** The store section of the server's file. */
        abstract String store();

        @BeforeEach
        void start() throws Exception {
            server = startServer("");
            rls = client(server);
        }

        @AfterEach
        void stop() {
            channels.forEach(ManagedChannel::shutdownNow);
            servers.forEach(RunningServer::close);
        }

        RunningServer startServer(String envoyExtra) throws Exception {
            return startServer(store(), envoyExtra, "tollgate.yaml");
        }

        /** Starts a server from a file named {@code fileName} of {@code store} and the envoy section. */
        RunningServer startServer(String store, String envoyExtra, String fileName) throws Exception {
            Path limits = dir.resolve("ratelimit");
            if (!Files.isDirectory(limits)) {
                Files.createDirectories(limits);
                Files.writeString(limits.resolve("messaging.yaml"), MESSAGING);
                Files.writeString(limits.resolve("edge.yaml"), EDGE);
                Files.writeString(limits.resolve("example7.yaml"), ReadmeExamples.REPLACES);
                Files.writeString(limits.resolve("example8.yaml"), ReadmeExamples.DETAILED_METRIC);
                Files.writeString(limits.resolve("example9.yaml"), ReadmeExamples.WILDCARD);
            }
            Path file = dir.resolve(fileName);
            Files.writeString(file, """
                    %s
                    server:
                      management-port: 0
                    policies:
                      per-client:
                        limits:
                          - capacity: 3
                            refill: 3/h
                    envoy:
                      port: 0
                      host: 127.0.0.1
                      config: %s
                    %s""".formatted(store, limits, envoyExtra));
            RunningServer started = RunningServer.start(ServerConfig.load(file).withPort(0));
            servers.add(started);
            return started;
        }

        RateLimitServiceGrpc.RateLimitServiceBlockingStub client(RunningServer to) {
            ManagedChannel channel = NettyChannelBuilder.forAddress(
                            "127.0.0.1", to.server().envoyPort())
                    .usePlaintext()
                    .build();
            channels.add(channel);
            return RateLimitServiceGrpc.newBlockingStub(channel);
        }

        RateLimitResponse ask(RateLimitRequest request) {
            return rls.withDeadlineAfter(20, TimeUnit.SECONDS).shouldRateLimit(request);
        }

        @Test
        void aNestedDescriptorIsLimitedApartFromTheKeyAloneAsInEnvoysReadme() {
            RateLimitRequest marketing =
                    request("messaging", descriptor("message_type", "marketing", "to_number", "2061234567"));
            RateLimitRequest any = request("messaging", descriptor("to_number", "2061234567"));

            List<RateLimitResponse> answers = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                answers.add(ask(marketing));
            }
            RateLimitResponse other = ask(any);

            assertThat(answers)
                    .extracting(RateLimitResponse::getOverallCode)
                    .containsExactly(Code.OK, Code.OK, Code.OK, Code.OK, Code.OK, Code.OVER_LIMIT);
            DescriptorStatus first = answers.get(0).getStatuses(0);
            assertThat(first.getCode()).isEqualTo(Code.OK);
            assertThat(first.getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
            assertThat(first.getCurrentLimit().getUnit()).isEqualTo(Unit.DAY);
            assertThat(first.getLimitRemaining()).isEqualTo(4);
            assertThat(first.getDurationUntilReset().getSeconds()).isBetween(17_279L, 17_280L);
            DescriptorStatus refused = answers.get(5).getStatuses(0);
            assertThat(refused.getCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(refused.getLimitRemaining()).isZero();
            assertThat(other.getOverallCode()).isEqualTo(Code.OK);
            assertThat(other.getStatuses(0).getCurrentLimit().getRequestsPerUnit())
                    .isEqualTo(100);
            assertThat(other.getStatuses(0).getLimitRemaining()).isEqualTo(99);
        }

        @Test
        void aKeyAloneGivesEachValueItsOwnBucketAValueOfZeroBlocksAndUnlimitedNeverLimits() {
            for (int i = 0; i < 5; i++) {
                ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.9")));
            }

            RateLimitResponse sixth = ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.9")));
            RateLimitResponse another = ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.8")));
            RateLimitResponse blocked = ask(request("edge_proxy_per_ip", descriptor("remote_address", "50.0.0.5")));
            List<Code> office = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                office.add(ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.1")))
                        .getOverallCode());
            }

            assertThat(sixth.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(sixth.getStatuses(0).getCurrentLimit().getName()).isEqualTo("per_ip");
            assertThat(another.getOverallCode()).isEqualTo(Code.OK);
            assertThat(another.getStatuses(0).getLimitRemaining()).isEqualTo(4);
            assertThat(blocked.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(blocked.getStatuses(0).getCurrentLimit().getRequestsPerUnit())
                    .isZero();
            assertThat(office).containsOnly(Code.OK);
        }

        @Test
        void hitsAddendIsTheCostZeroMeaningOneAndADescriptorsOwnOverridesTheRequests() {
            RateLimitDescriptor address = descriptor("remote_address", "10.0.0.7");

            RateLimitResponse three = ask(request("edge_proxy_per_ip", address).toBuilder()
                    .setHitsAddend(3)
                    .build());
            RateLimitResponse zero = ask(request("edge_proxy_per_ip", address).toBuilder()
                    .setHitsAddend(0)
                    .build());
            RateLimitResponse tooMany = ask(
                    request(
                                    "edge_proxy_per_ip",
                                    address.toBuilder()
                                            .setHitsAddend(UInt64Value.of(2))
                                            .build())
                            .toBuilder()
                            .setHitsAddend(1)
                            .build());
            RateLimitResponse aboveCapacity =
                    ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.6")).toBuilder()
                            .setHitsAddend(6)
                            .build());
            RateLimitResponse unsignedHuge = ask(request(
                    "edge_proxy_per_ip",
                    descriptor("remote_address", "10.0.0.6").toBuilder()
                            .setHitsAddend(UInt64Value.of(-1)) // 2^64 - 1 on the wire
                            .build()));
            RateLimitResponse untouched = ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.6")));

            assertThat(three.getStatuses(0).getLimitRemaining()).isEqualTo(2);
            assertThat(zero.getStatuses(0).getLimitRemaining()).isEqualTo(1);
            assertThat(tooMany.getOverallCode())
                    .as("the descriptor's 2 hits, not the request's 1")
                    .isEqualTo(Code.OVER_LIMIT);
            assertThat(aboveCapacity.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(unsignedHuge.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(untouched.getStatuses(0).getLimitRemaining())
                    .as("hits above the capacity charge nothing")
                    .isEqualTo(4);
        }

        @Test
        void aRequestThatOneDescriptorRefusesChargesNoneOfTheOthers() {
            ask(request("edge_proxy_per_ip", descriptor("generic_key", "scarce")));

            RateLimitResponse both = ask(request(
                    "edge_proxy_per_ip",
                    descriptor("remote_address", "10.0.0.5"),
                    descriptor("generic_key", "scarce"),
                    descriptor("to_number", "1")));
            RateLimitResponse alone = ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.5")));

            assertThat(both.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(both.getStatusesList())
                    .extracting(DescriptorStatus::getCode)
                    .containsExactly(Code.OK, Code.OVER_LIMIT, Code.OK);
            assertThat(both.getStatuses(0).getLimitRemaining())
                    .as("what it holds once the refused request's charge is given back")
                    .isEqualTo(5);
            assertThat(both.getStatuses(2).hasCurrentLimit())
                    .as("a descriptor that matches no limit")
                    .isFalse();
            assertThat(alone.getStatuses(0).getLimitRemaining())
                    .as("the refused request took nothing")
                    .isEqualTo(4);
        }

        @Test
        void shadowModeAnswersOkButCountsWhatItWouldHaveRefused() {
            RateLimitRequest watched = request("edge_proxy_per_ip", descriptor("generic_key", "watched"));

            RateLimitResponse first = ask(watched);
            RateLimitResponse second = ask(watched);

            assertThat(first.getOverallCode()).isEqualTo(Code.OK);
            assertThat(second.getOverallCode()).isEqualTo(Code.OK);
            assertThat(second.getStatuses(0).getCode()).isEqualTo(Code.OK);
            assertThat(second.getStatuses(0).getLimitRemaining()).isZero();
            assertThat(server.management("GET", "/metrics").body())
                    .contains("tollgate_envoy_decisions_total{degraded=\"false\",domain=\"edge_proxy_per_ip\","
                            + "key=\"generic_key\",result=\"shadow_over_limit\"} 1.0")
                    .contains("tollgate_envoy_decisions_total{degraded=\"false\",domain=\"edge_proxy_per_ip\","
                            + "key=\"generic_key\",result=\"ok\"} 1.0");
        }

        @Test
        void aLimitThatReplacesAnotherDropsItFromARequestThatMatchesBothAsInTheReadmesExample7() {
            RateLimitDescriptor specific = descriptor("key_1", "value_1", "user", "bkthomps");
            RateLimitDescriptor replacing = descriptor("key_2", "value_2", "user", "bkthomps");

            RateLimitResponse both = ask(request("example7", specific, replacing));
            RateLimitResponse alone = ask(request("example7", specific));

            assertThat(both.getOverallCode()).isEqualTo(Code.OK);
            assertThat(both.getStatuses(0).getCode()).isEqualTo(Code.OK);
            assertThat(both.getStatuses(0).hasCurrentLimit())
                    .as("the replaced limit is not checked")
                    .isFalse();
            assertThat(both.getStatuses(1).getCurrentLimit().getRequestsPerUnit())
                    .isEqualTo(10);
            assertThat(both.getStatuses(1).getLimitRemaining()).isEqualTo(9);
            assertThat(alone.getStatuses(0).getCurrentLimit().getName()).isEqualTo("specific_limit");
            assertThat(alone.getStatuses(0).getLimitRemaining())
                    .as("nor charged: its 5 a second, less this request")
                    .isEqualTo(4);
            assertThat(server.management("GET", "/metrics").body())
                    .as("counted once, by the limit that replaced it")
                    .contains("domain=\"example7\",key=\"key_1.user\",result=\"ok\"} 1.0")
                    .contains("domain=\"example7\",key=\"key_2.user\",result=\"ok\"} 1.0");
        }

        @Test
        void aWildcardValueLimitsEachValueItStartsInABucketOfItsOwnAsInTheReadmesExample9() {
            RateLimitResponse first = ask(request("example9", descriptor("key1", "value_1")));
            RateLimitResponse again = ask(request("example9", descriptor("key1", "value_1")));
            RateLimitResponse another = ask(request("example9", descriptor("key1", "value_2")));
            RateLimitResponse unmatched = ask(request("example9", descriptor("key1", "other")));

            assertThat(first.getStatuses(0).getCurrentLimit().getRequestsPerUnit())
                    .isEqualTo(20);
            assertThat(first.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.MINUTE);
            assertThat(first.getStatuses(0).getLimitRemaining()).isEqualTo(19);
            assertThat(again.getStatuses(0).getLimitRemaining()).isEqualTo(18);
            assertThat(another.getStatuses(0).getLimitRemaining()).isEqualTo(19);
            assertThat(unmatched.getStatuses(0).hasCurrentLimit()).isFalse();
        }

        @Test
        void aDetailedMetricDescriptorNamesAtMostAHundredValuesInItsMetersAsInTheReadmesExample8() {
            ask(request("example8", descriptor("key1", "unspecified_value")));
            ask(request("example8", descriptor("key1", "unspecified_value2")));
            ask(request("example8", descriptor("key1", "value1")));
            for (int i = 0; i < 100; i++) {
                ask(request("example8", descriptor("key1", "client-" + i)));
            }

            String metrics = server.management("GET", "/metrics").body();
            List<String> keys = metrics.lines()
                    .filter(line ->
                            line.startsWith("tollgate_envoy_decisions_total{") && line.contains("domain=\"example8\""))
                    .map(line -> line.replaceAll(".*,key=\"([^\"]*)\".*", "$1"))
                    .distinct()
                    .toList();

            assertThat(metrics)
                    .contains("domain=\"example8\",key=\"key1_unspecified_value\",result=\"ok\"} 1.0")
                    .contains("domain=\"example8\",key=\"key1_unspecified_value2\",result=\"ok\"} 1.0")
                    .contains("domain=\"example8\",key=\"key1_client-97\",result=\"ok\"} 1.0")
                    .doesNotContain("key1_client-98")
                    .doesNotContain("key1_value1");
            assertThat(keys)
                    .as("a hundred values of the detailed descriptor, and the key alone for the rest and value1")
                    .hasSize(101)
                    .contains("key1");
        }

        @Test
        void anUnlimitedDescriptorAnswersTheMostAUint32HoldsAsEnvoyproxyRatelimitDoes() {
            RateLimitResponse office = ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.1")));

            assertThat(office.getStatuses(0).getCode()).isEqualTo(Code.OK);
            assertThat(Integer.toUnsignedLong(office.getStatuses(0).getLimitRemaining()))
                    .isEqualTo(4_294_967_295L);
            assertThat(office.getStatuses(0).hasCurrentLimit()).isFalse();
        }

        @Test
        void theGlobalShadowModeAnswersOkButChargesAndCountsWhatItWouldHaveRefused() throws Exception {
            RunningServer shadowed = startServer("  shadow-mode: true\n");
            RateLimitServiceGrpc.RateLimitServiceBlockingStub client = client(shadowed);
            RateLimitRequest scarce = request(
                    "edge_proxy_per_ip", descriptor("generic_key", "scarce"), descriptor("remote_address", "10.0.0.2"));

            RateLimitResponse first = client.shouldRateLimit(scarce);
            RateLimitResponse second = client.shouldRateLimit(scarce);

            assertThat(first.getOverallCode()).isEqualTo(Code.OK);
            assertThat(second.getOverallCode()).isEqualTo(Code.OK);
            assertThat(second.getStatusesList())
                    .as("each descriptor's own status, as envoyproxy/ratelimit answers")
                    .extracting(DescriptorStatus::getCode)
                    .containsExactly(Code.OVER_LIMIT, Code.OK);
            assertThat(second.getStatuses(1).getLimitRemaining())
                    .as("the request goes on: what it was charged stays taken")
                    .isEqualTo(3);
            assertThat(headers(second))
                    .containsKeys("RateLimit-Policy", "RateLimit")
                    .doesNotContainKey("Retry-After");
            assertThat(shadowed.management("GET", "/metrics").body())
                    .contains("tollgate_envoy_global_shadow_mode_total{domain=\"edge_proxy_per_ip\"} 1.0")
                    .contains("domain=\"edge_proxy_per_ip\",key=\"generic_key\",result=\"over_limit\"} 1.0");
        }

        @Test
        void anUnknownDomainAndADescriptorThatMatchesNothingAreOkWithoutALimit() {
            RateLimitResponse unknown = ask(request("nobody", descriptor("remote_address", "10.0.0.1")));
            RateLimitResponse unmatched = ask(request("messaging", descriptor("message_type", "transactional")));

            for (RateLimitResponse answer : List.of(unknown, unmatched)) {
                assertThat(answer.getOverallCode()).isEqualTo(Code.OK);
                assertThat(answer.getStatuses(0).getCode()).isEqualTo(Code.OK);
                assertThat(answer.getStatuses(0).hasCurrentLimit()).isFalse();
                assertThat(answer.getResponseHeadersToAddList()).isEmpty();
            }
        }

        @Test
        void aDescriptorNamingAPolicyReportsItsRateInEnvoysUnits() {
            RateLimitResponse answer = ask(request("edge_proxy_per_ip", descriptor("client", "c-1")));

            assertThat(answer.getStatuses(0).getCurrentLimit().getName()).isEqualTo("per-client");
            assertThat(answer.getStatuses(0).getCurrentLimit().getRequestsPerUnit())
                    .isEqualTo(3);
            assertThat(answer.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.HOUR);
            assertThat(answer.getStatuses(0).getLimitRemaining()).isEqualTo(2);
        }

        @Test
        void aLimitTheRequestAsksForReplacesTheConfiguredOneInABucketOfItsOwn() {
            RateLimitDescriptor overridden = descriptor("remote_address", "10.0.0.4").toBuilder()
                    .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder()
                            .setRequestsPerUnit(2)
                            .setUnit(RateLimitDescriptor.RateLimitUnit.MINUTE))
                    .build();

            List<Code> codes = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                codes.add(ask(request("edge_proxy_per_ip", overridden)).getOverallCode());
            }
            RateLimitResponse configured = ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.4")));

            assertThat(codes).containsExactly(Code.OK, Code.OK, Code.OVER_LIMIT);
            assertThat(configured.getStatuses(0).getLimitRemaining()).isEqualTo(4);
            assertThat(server.management("GET", "/metrics").body())
                    .as("an override's keys are the request's: counted under one name")
                    .contains("domain=\"edge_proxy_per_ip\",key=\"override\",result=\"over_limit\"} 1.0");
        }

        @Test
        void answersCarryTheRateLimitFieldsAndRetryAfterWhenOverTheLimit() {
            RateLimitRequest scarce = request("edge_proxy_per_ip", descriptor("generic_key", "scarce"));

            Map<String, String> allowed = headers(ask(scarce));
            Map<String, String> refused = headers(ask(scarce));

            assertThat(allowed).containsKeys("RateLimit-Policy", "RateLimit").doesNotContainKey("Retry-After");
            assertThat(allowed.get("RateLimit-Policy")).endsWith(";q=1;w=3600");
            assertThat(allowed.get("RateLimit")).endsWith(";r=0;t=3600");
            assertThat(refused.get("Retry-After")).isEqualTo("3600");
            assertThat(refused).doesNotContainKeys("X-RateLimit-Limit", "Content-Type", "Tollgate-Degraded");
        }

        @Test
        void theXRateLimitTrioIsAnOption() throws Exception {
            RunningServer withTrio = startServer("  x-ratelimit-headers: true\n");

            RateLimitResponse answer = client(withTrio)
                    .shouldRateLimit(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.3")));

            assertThat(headers(answer))
                    .containsEntry("X-RateLimit-Limit", "5")
                    .containsEntry("X-RateLimit-Remaining", "4")
                    .containsKey("X-RateLimit-Reset");
        }

        @Test
        void aRequestWithoutDomainDescriptorsOrEntriesIsAnInvalidArgument() {
            assertThatThrownBy(() -> ask(request("", descriptor("remote_address", "10.0.0.1"))))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).isEqualTo("domain must not be empty");
                    });
            assertThatThrownBy(() -> ask(request("messaging")))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getDescription()).isEqualTo("descriptors must not be empty"));
            assertThatThrownBy(() -> ask(request("messaging", RateLimitDescriptor.getDefaultInstance())))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getDescription()).isEqualTo("descriptors[0] has no entries"));
            assertThatThrownBy(() -> ask(request(
                            "edge_proxy_per_ip",
                            descriptor("remote_address", "10.0.0.1"),
                            descriptor("remote_address", "10.0.0.9"),
                            RateLimitDescriptor.getDefaultInstance())))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getDescription()).isEqualTo("descriptors[2] has no entries"));
            assertThat(ask(request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.9")))
                            .getStatuses(0)
                            .getLimitRemaining())
                    .as("the invalid request charged none of its valid descriptors")
                    .isEqualTo(4);
            assertThatThrownBy(() -> ask(request("messaging", descriptor("", "x"))))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getDescription())
                                    .isEqualTo("descriptors[0].entries[0].key must not be empty"));
        }

        @Test
        void theHealthServiceSaysItServes() {
            HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channels.get(0));

            assertThat(health.check(HealthCheckRequest.getDefaultInstance()).getStatus())
                    .isEqualTo(ServingStatus.SERVING);
            assertThat(health.check(HealthCheckRequest.newBuilder()
                                    .setService(RateLimitServiceGrpc.SERVICE_NAME)
                                    .build())
                            .getStatus())
                    .isEqualTo(ServingStatus.SERVING);
        }

        @Test
        void aChangedRateLimitFileTakesEffectOnReloadAndABrokenOneChangesNothing() throws Exception {
            RateLimitRequest number = request("messaging", descriptor("to_number", "1"));
            ask(number);
            Path file = dir.resolve("ratelimit/messaging.yaml");

            Files.writeString(file, MESSAGING.replace("requests_per_unit: 100", "requests_per_unit: 50"));
            ConfigReloader.Result reloaded = server.server().reload("test");
            RateLimitResponse after = ask(number);
            Files.writeString(file, MESSAGING.replace("unit: day", "unit: fortnight"));
            ConfigReloader.Result broken = server.server().reload("test");
            RateLimitResponse still = ask(number);

            assertThat(reloaded.reloaded()).isTrue();
            assertThat(after.getStatuses(0).getCurrentLimit().getRequestsPerUnit())
                    .isEqualTo(50);
            assertThat(after.getStatuses(0).getLimitRemaining())
                    .as("the bucket kept its spent token")
                    .isEqualTo(48);
            assertThat(broken.reloaded()).isFalse();
            assertThat(broken.detail()).contains("messaging.yaml:").contains("fortnight");
            assertThat(still.getStatuses(0).getLimitRemaining()).isEqualTo(47);
        }
    }

    @Nested
    class InMemory extends Contract {

        @Override
        String store() {
            return "memory:\n  maximum-keys: 1000";
        }
    }

    @Nested
    class OnRedis extends Contract {

        /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
        @Override
        String store() {
            return redisStore("2s", "deny");
        }

        String redisStore(String timeout, String onFailure) {
            return """
                    redis:
                      uri: %s
                      timeout: %s
                      failure-policy: %s""".formatted(redis.server().uri(), timeout, onFailure);
        }

        @BeforeEach
        void emptyRedis() {
            redis.server().command("FLUSHALL");
        }

        @AfterEach
        void healRedis() {
            redis.server().heal();
        }

        @Test
        void tokensGivenBackForARefusedRequestOnOneServerEndTheRefusalCachedOnAnother() throws Exception {
            RunningServer other = startServer("");
            RateLimitServiceGrpc.RateLimitServiceBlockingStub otherRls = client(other);
            RateLimitRequest scarce = request("edge_proxy_per_ip", descriptor("generic_key", "scarce"));
            assertThat(otherRls.shouldRateLimit(scarce).getOverallCode()).isEqualTo(Code.OK);
            assertThat(otherRls.shouldRateLimit(scarce).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            // An operator empties the bucket with redis-cli: nobody announces that, and the other server goes on
            // refusing from its deny cache
            for (Object key : (List<?>) redis.server().command("KEYS", "tollgate:*scarce")) {
                redis.server().command("DEL", key.toString());
            }
            assertThat(otherRls.shouldRateLimit(scarce).getOverallCode()).isEqualTo(Code.OVER_LIMIT);

            // All or nothing: the scarce token is taken, the blocked descriptor refuses, the token is given back
            RateLimitResponse refused = ask(request(
                    "edge_proxy_per_ip",
                    descriptor("generic_key", "scarce"),
                    descriptor("remote_address", "50.0.0.5")));

            assertThat(refused.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(refused.getStatuses(0).getCode()).isEqualTo(Code.OK);
            long start = System.nanoTime();
            Code code;
            while ((code = otherRls.shouldRateLimit(scarce).getOverallCode()) == Code.OVER_LIMIT
                    && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10)) {
                Thread.sleep(5);
            }
            assertThat(code).isEqualTo(Code.OK);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                    .as("the other server admits the token given back, in ms (its deny cache's ceiling is 5 s)")
                    .isLessThanOrEqualTo(200);
        }

        @Test
        void twoServersOnOneRedisAdmitExactlyTheLimitOfFortyConcurrentCalls() throws Exception {
            RunningServer other = startServer("");
            Files.writeString(dir.resolve("ratelimit/sms.yaml"), """
                    domain: sms
                    descriptors:
                      - key: to_number
                        rate_limit:
                          unit: hour
                          requests_per_unit: 20
                    """);
            assertThat(server.server().reload("test").reloaded()).isTrue();
            assertThat(other.server().reload("test").reloaded()).isTrue();
            List<RateLimitServiceGrpc.RateLimitServiceBlockingStub> pair = List.of(rls, client(other));
            RateLimitRequest number = request("sms", descriptor("to_number", "2065550100"));
            ExecutorService callers = Executors.newFixedThreadPool(40);
            try {
                List<Future<Code>> codes = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = pair.get(i % 2);
                    codes.add(callers.submit(() -> stub.withDeadlineAfter(20, TimeUnit.SECONDS)
                            .shouldRateLimit(number)
                            .getOverallCode()));
                }
                List<Code> answered = new ArrayList<>();
                for (Future<Code> code : codes) {
                    answered.add(code.get());
                }

                assertThat(answered.stream().filter(code -> code == Code.OK)).hasSize(20);
                assertThat(answered.stream().filter(code -> code == Code.OVER_LIMIT))
                        .hasSize(20);
            } finally {
                callers.shutdownNow();
            }
        }

        @Test
        void theHealthServiceFollowsRedis() throws Exception {
            HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channels.get(0));

            redis.server().kill();
            boolean downSeen = awaitHealth(health, ServingStatus.NOT_SERVING);
            redis.server().restart();
            boolean backSeen = awaitHealth(health, ServingStatus.SERVING);

            assertThat(downSeen).as("NOT_SERVING while Redis is down").isTrue();
            assertThat(backSeen).as("SERVING once Redis answers again").isTrue();
        }

        /** Asks the health service every 100 ms, for up to 20 s, until it answers {@code wanted}. */
        private boolean awaitHealth(HealthGrpc.HealthBlockingStub health, ServingStatus wanted) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline) {
                ServingStatus status = health.withDeadlineAfter(5, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance())
                        .getStatus();
                if (status == wanted) {
                    return true;
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
            return false;
        }

        @ParameterizedTest(name = "on-failure: {0}")
        @ValueSource(strings = {"allow", "deny", "local"})
        void whileRedisIsDownTheFailurePolicyDecidesAndTheAnswerSaysSo(String onFailure) throws Exception {
            RunningServer failing = startServer(redisStore("200ms", onFailure), "", "failing.yaml");
            RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = client(failing);
            RateLimitRequest address = request("edge_proxy_per_ip", descriptor("remote_address", "10.0.0.2"));
            redis.server().kill();

            List<RateLimitResponse> answers = new ArrayList<>();
            for (int i = 0; i < 7; i++) {
                answers.add(stub.withDeadlineAfter(20, TimeUnit.SECONDS).shouldRateLimit(address));
            }

            List<Code> codes =
                    answers.stream().map(RateLimitResponse::getOverallCode).toList();
            switch (onFailure) {
                case "allow" -> assertThat(codes).containsOnly(Code.OK);
                case "deny" -> assertThat(codes).containsOnly(Code.OVER_LIMIT);
                default ->
                    assertThat(codes)
                            .as("this instance's share of the limit, at least 1")
                            .contains(Code.OK)
                            .endsWith(Code.OVER_LIMIT);
            }
            assertThat(headers(answers.get(0))).containsKey("Tollgate-Degraded");
            assertThat(failing.management("GET", "/metrics").body())
                    .contains("tollgate_envoy_decisions_total{degraded=\"true\",domain=\"edge_proxy_per_ip\","
                            + "key=\"remote_address\"");
        }
    }

    static RateLimitRequest request(String domain, RateLimitDescriptor... descriptors) {
        return RateLimitRequest.newBuilder()
                .setDomain(domain)
                .addAllDescriptors(List.of(descriptors))
                .build();
    }

    static RateLimitDescriptor descriptor(String... keysAndValues) {
        RateLimitDescriptor.Builder descriptor = RateLimitDescriptor.newBuilder();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            descriptor.addEntries(RateLimitDescriptor.Entry.newBuilder()
                    .setKey(keysAndValues[i])
                    .setValue(keysAndValues[i + 1]));
        }
        return descriptor.build();
    }

    static Map<String, String> headers(RateLimitResponse answer) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (HeaderValue header : answer.getResponseHeadersToAddList()) {
            headers.put(header.getKey(), header.getValue());
        }
        return headers;
    }
}
