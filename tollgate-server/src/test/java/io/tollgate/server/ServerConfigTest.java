package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.http.ClientKey;
import io.tollgate.http.Rule;
import io.tollgate.internal.store.MemoryStoreProvider;
import io.tollgate.redis.internal.RedisSettings;
import io.tollgate.redis.internal.store.RedisStoreProvider;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ServerConfigTest {

    private static final String FULL = """
            server:
              host: 127.0.0.1
              port: 9090
              shutdown-timeout: 5s
              upstream: http://127.0.0.1:9000
              upstream-timeout: 10s
            redis:
              uri: redis://127.0.0.1:6379
              timeout: 80ms
              key-prefix: "myapp:"
              failure-policy: deny
              expected-instances: 3
            policies:
              per-client:
                limits:
                  - capacity: 10
                    refill: 5/s
              daily:
                limits:
                  - capacity: 1000
                    refill: 1000/d
            rules:
              - path: /api/**
                methods: [GET, POST]
                key: header:X-API-Key
                policy: per-client
                cost: 1
            client-ip:
              trusted-proxies: [10.0.0.0/8]
            """;

    @Test
    void readsEverySection() {
        ServerConfig config = ServerConfig.parse(FULL, "tollgate.yaml");

        Policy perClient = Policy.of("per-client", Limit.of(10, Rate.perSecond(5)));
        assertThat(config.host()).isEqualTo("127.0.0.1");
        assertThat(config.port()).isEqualTo(9090);
        assertThat(config.shutdownTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.store())
                .isEqualTo(new RedisStoreProvider.Settings(new RedisSettings(
                        "redis://127.0.0.1:6379",
                        List.of(),
                        Duration.ofMillis(80),
                        "myapp:",
                        FailurePolicy.DENY,
                        3,
                        true,
                        false,
                        Duration.ofSeconds(5),
                        List.of(),
                        null,
                        null)));
        assertThat(config.policies()).containsOnlyKeys("per-client", "daily").containsEntry("per-client", perClient);
        assertThat(config.rules())
                .containsExactly(Rule.builder(perClient)
                        .path("/api/**")
                        .methods("GET", "POST")
                        .key(ClientKey.header("X-API-Key"))
                        .build());
        assertThat(config.clientIps().isTrustedProxy("10.1.1.1")).isTrue();
        assertThat(config.upstream()).isEqualTo(URI.create("http://127.0.0.1:9000"));
        assertThat(config.upstreamTimeout()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void withoutAStoreTheBucketsLiveInMemoryAndTheDefaultsApply() {
        ServerConfig config = ServerConfig.parse("policies: {p: {limits: [{capacity: 1, refill: 1/s}]}}", "t.yaml");

        assertThat(config.store()).isEqualTo(new MemoryStoreProvider.Settings(100_000));
        assertThat(config.host())
                .as("a decision server's port, which spends buckets")
                .isEqualTo("127.0.0.1");
        assertThat(config.port()).isEqualTo(ServerConfig.DEFAULT_PORT);
        assertThat(config.upstream()).isNull();
        assertThat(config.withPort(0).port()).isZero();
        assertThat(config.warmUp()).isTrue();
    }

    @Test
    void theWarmUpIsOnUnlessTurnedOff() {
        ServerConfig config = ServerConfig.parse(
                "server: {warm-up: false}\npolicies: {p: {limits: [{capacity: 1, refill: 1/s}]}}", "t.yaml");

        assertThat(config.warmUp()).isFalse();
        assertThat(config.withWarmUp(true).warmUp()).isTrue();
        assertThat(config.withWarmUp(true).withPort(0).warmUp()).isTrue();
    }

    @Test
    void batchingIsOnUnlessTurnedOff() {
        ServerConfig config = ServerConfig.parse(
                "redis: {uri: redis://127.0.0.1:6379, batching: false}\n"
                        + "policies: {p: {limits: [{capacity: 1, refill: 1/s}]}}",
                "t.yaml");

        assertThat(((RedisStoreProvider.Settings) config.store()).redis().batching())
                .isFalse();
    }

    @Test
    void theDenyCachesCeilingIsASettingOfTheRedisSection() {
        ServerConfig config =
                ServerConfig.parse("redis: {uri: redis://127.0.0.1:6379, deny-cache-max-age: 2s}", "t.yaml");

        assertThat(((RedisStoreProvider.Settings) config.store()).redis().denyCacheMaxAge())
                .isEqualTo(Duration.ofSeconds(2));
        assertThatThrownBy(() ->
                        ServerConfig.parse("redis: {uri: redis://127.0.0.1:6379, deny-cache-max-age: 0s}", "t.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis.deny-cache-max-age: must be longer than zero");
    }

    @Test
    void aClusterIsGivenBySeedNodes() {
        ServerConfig config = ServerConfig.parse(
                "redis: {cluster-uris: [redis://10.0.0.1:7000, redis://10.0.0.2:7000], failure-policy: allow}",
                "t.yaml");

        assertThat(config.store())
                .isEqualTo(new RedisStoreProvider.Settings(new RedisSettings(
                        null,
                        List.of("redis://10.0.0.1:7000", "redis://10.0.0.2:7000"),
                        Duration.ofMillis(50),
                        "tollgate:",
                        FailurePolicy.ALLOW,
                        0,
                        true,
                        false,
                        Duration.ofSeconds(5),
                        List.of(),
                        null,
                        null)));
    }

    @Test
    void redisCanBeRequiredAtStart() {
        ServerConfig config = ServerConfig.parse(
                "redis: {uri: 'redis://127.0.0.1:6379', require-redis-at-start: true}", "tollgate.yaml");

        assertThat(((RedisStoreProvider.Settings) config.store()).redis().requireRedisAtStart())
                .isTrue();
        assertThatThrownBy(() -> ServerConfig.parse("redis: {require-redis-at-start: true}", "t.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("t.yaml:1: redis: needs uri (one server, Sentinel or TLS) or cluster-uris (the seed nodes"
                        + " of a cluster)");
    }

    @ParameterizedTest
    @CsvSource({"1048576, 1048576", "512KiB, 524288", "16MiB, 16777216", "2GiB, 2147483648", "1 MiB, 1048576"})
    void aBodySizeIsReadInBytesOrBinaryUnits(String written, long bytes) {
        ServerConfig config =
                ServerConfig.parse("server: {upstream: 'http://h:1', max-body-size: '" + written + "'}\n", "t.yaml");

        assertThat(config.maxBodyBytes()).isEqualTo(bytes);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "serve: {port: 1} | t.yaml:1: configuration: unknown setting 'serve'; known: callers, client-ip, concurrency-limits, envoy, memory, overload, paths, policies, redis, responses, rules, server",
                "routes: [] | t.yaml:1: configuration: unknown setting 'routes' (it is rules now); known: callers, client-ip,",
                "store: {} | t.yaml:1: configuration: unknown setting 'store' (it is redis (with failure-policy, expected-instances) or memory now)",
                "upstream: http://h:1 | t.yaml:1: configuration: unknown setting 'upstream' (it is server.upstream now)",
                "server: {port: 70000} | t.yaml:1: server.port: port must be 0 to 65535, was 70000",
                "server: {port: http} | t.yaml:1: server.port: must be a whole number, was 'http'",
                "server: {shutdown-timeout: 10} | t.yaml:1: server.shutdown-timeout: must be a duration such as 50ms",
                "redis: {uri: redis://h:1, timeout: fast} | t.yaml:1: redis.timeout: must be a duration",
                "redis: {uri: http://h:1} | t.yaml:1: redis.uri: must be a redis://, rediss:// or",
                "redis: {} | t.yaml:1: redis: needs uri (one server, Sentinel or TLS) or cluster-uris",
                "redis: {uri: redis://h:1, cluster-uris: [redis://h:2]} | t.yaml:1: redis: has both uri and cluster-uris",
                "redis: {cluster-uris: []} | t.yaml:1: redis.cluster-uris: must list at least one node",
                "redis: {uri: redis://h:1, failure-policy: maybe} | t.yaml:1: redis.failure-policy: must be allow, deny or local",
                "redis: {failure-policy: allow} | t.yaml:1: redis: needs uri (one server, Sentinel or TLS) or cluster-uris",
                "redis: {uri: redis://h:1, expected-instances: 0} | t.yaml:1: redis.expected-instances: must be 1 to 10000",
                "{redis: {uri: redis://h:1}, memory: {}} | t.yaml:1: memory: applies only without redis",
                "memory: {maximum-keys: 0} | t.yaml:1: memory.maximum-keys: must be at least 1, was 0",
                "server: {upstream: 127.0.0.1:9000} | t.yaml:1: server.upstream: must be an http:// or https:// URI with a host",
                "server: {upstream: 'http://h:9/?q=1'} | t.yaml:1: server.upstream: must not have a query",
                "server: {upstream-timeout: 5s} | t.yaml:1: server.upstream-timeout: applies only with an upstream",
                "server: {max-body-size: 1MiB} | t.yaml:1: server.max-body-size: applies only with an upstream",
                "server: {upstream: 'http://h:1', max-body-size: 10MB} | t.yaml:1: server.max-body-size: must be a size of"
                        + " at least one byte, such as 16MiB, 512KiB or 1048576, was '10MB'",
                "server: {upstream: 'http://h:1', max-body-size: 0} | t.yaml:1: server.max-body-size: must be a size of",
                "server: {idle-timeout: 0s} | t.yaml:1: server.idle-timeout: must be longer than zero",
                "server: {warm-up: later} | t.yaml:1: server.warm-up: must be true or false",
                "client-ip: {trusted-proxies: [10.0.0.0/99]} | t.yaml:1: client-ip.trusted-proxies: invalid trusted proxy '10.0.0.0/99'",
                "{policies: {p: {limits: [{capacity: 1, refill: 1/s}]}}, rules: [{policy: p}]} | t.yaml:1: rules: limit proxied requests, so they need server.upstream",
                "envoy: {port: 8081} | t.yaml:1: envoy.config: is required",
                "envoy: {config: x.yaml, ports: 1} | t.yaml:1: envoy: unknown setting 'ports'",
                "envoy: {config: x.yaml, port: -1} | t.yaml:1: envoy.port: port must be 0 to 65535, was -1",
                "envoy: {config: /no/such/ratelimit.yaml} | t.yaml:1: envoy.config: cannot read envoy config '/no/such/ratelimit.yaml'",
                "envoy: {config: x.yaml, x-ratelimit-headers: maybe} | t.yaml:1: envoy.x-ratelimit-headers: must be true or false",
                "envoy: {config: x.yaml, shadow-mode: maybe} | t.yaml:1: envoy.shadow-mode: must be true or false",
                "envoy: {config: x.yaml, merge-domains: maybe} | t.yaml:1: envoy.merge-domains: must be true or false",
                "top-keys: {show: hidden} | t.yaml:1: top-keys.show: must be whole, masked or digest, was 'hidden'",
                "top-keys: {capacity: 4} | t.yaml:1: top-keys.capacity: must be 8 to 4096, was 4",
                "top-keys: {keys: 10} | t.yaml:1: top-keys: unknown setting 'keys'; known: capacity, enabled, show",
                "overload: {enabled: true} | t.yaml:1: overload: protects the upstream from overload, so it needs server.upstream",
                "{server: {upstream: 'http://h:9'}, overload: {enabled: true, max-wait: -5ms}} | t.yaml:1: overload.max-wait: must be",
            })
    void anInvalidSettingIsNamedWithTheFileAndLine(String yaml, String message) {
        assertThatThrownBy(() -> ServerConfig.parse(yaml, "t.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(message.strip());
    }

    @Test
    void envoyMergeDomainsReadsTwoFilesOfOneDomainWhichAreOtherwiseRefused(@TempDir Path dir) throws Exception {
        Path limits = Files.createDirectories(dir.resolve("ratelimit"));
        Files.writeString(limits.resolve("a.yaml"), "domain: edge\ndescriptors:\n  - key: a\n");
        Files.writeString(limits.resolve("b.yaml"), "domain: edge\ndescriptors:\n  - key: b\n");
        String yaml = "envoy: {config: '" + limits + "'%s}";

        assertThat(ServerConfig.parse(yaml.formatted(", merge-domains: true"), "t.yaml")
                        .envoy())
                .isNotNull();
        assertThatThrownBy(() -> ServerConfig.parse(yaml.formatted(""), "t.yaml"))
                .hasMessageContaining("b.yaml:1: domain: domain 'edge' is defined twice");
    }

    @Test
    void readsTheLeasedPoliciesAsAListOrOneString() {
        String redis = "redis: {uri: redis://127.0.0.1:6379, leases: %s}";

        assertThat(redisSettings(redis.formatted("[per-client, daily]")).leases())
                .containsExactly("per-client", "daily");
        assertThat(redisSettings(redis.formatted("'*'")).leases()).containsExactly("*");
        assertThat(redisSettings("redis: {uri: redis://127.0.0.1:6379}").leases())
                .isEmpty();
        assertThatThrownBy(() -> ServerConfig.parse(redis.formatted("[per-client, '']"), "t.yaml"))
                .hasMessageContaining("redis.leases: must name policies (or * for every policy), had an empty name");
    }

    private static RedisSettings redisSettings(String yaml) {
        return ((RedisStoreProvider.Settings) ServerConfig.parse(yaml, "t.yaml").store()).redis();
    }

    @Test
    void theIssuesOwnExamplesOfBadConfigurationNameTheLine() {
        String unknownPolicy = FULL.replace("policy: per-client", "policy: per-clent");
        String zeroCapacity = FULL.replace("capacity: 10", "capacity: 0");
        String badDuration = FULL.replace("timeout: 80ms", "timeout: 80");
        String unknownKey = FULL.replace("    cost: 1", "    costs: 1");

        assertThatThrownBy(() -> ServerConfig.parse(unknownPolicy, "tollgate.yaml"))
                .hasMessage(
                        "tollgate.yaml:26: rules[0].policy: unknown policy 'per-clent'; defined: per-client, daily");
        assertThatThrownBy(() -> ServerConfig.parse(zeroCapacity, "tollgate.yaml"))
                .hasMessage("tollgate.yaml:16: policies.per-client.limits[0]: capacity must be at least 1, was 0");
        assertThatThrownBy(() -> ServerConfig.parse(badDuration, "tollgate.yaml"))
                .hasMessage("tollgate.yaml:9: redis.timeout: must be a duration such as 50ms, 30s or 5m, was '80'");
        assertThatThrownBy(() -> ServerConfig.parse(unknownKey, "tollgate.yaml"))
                .hasMessageStartingWith("tollgate.yaml:27: rules[0]: unknown setting 'costs'");
    }

    @Test
    void aMissingFileIsNamed(@TempDir Path dir) {
        Path missing = dir.resolve("nope.yaml");

        assertThatThrownBy(() -> ServerConfig.load(missing))
                .hasMessage("cannot read config file '" + missing + "': no such file");
    }

    @Test
    void loadsAFile(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("tollgate.yaml"), FULL);

        assertThat(ServerConfig.load(file).port()).isEqualTo(9090);
    }
}
