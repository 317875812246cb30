package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.config.ConfigSection;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.http.OverloadProtection;
import io.tollgate.http.Rule;
import io.tollgate.internal.store.MemoryStoreProvider;
import io.tollgate.redis.internal.RedisSettings;
import io.tollgate.redis.internal.store.RedisStoreProvider;
import io.tollgate.server.internal.envoy.QuotaSettings;
import io.tollgate.top.TopKeysSettings;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md against the schema the server checks its file by, key by key: every key the server reads
 * has a row, and every row names a key the server reads (or, marked so, one the starter reads). A key added to the
 * code without a row, or a row left behind by a key that went, fails here.
 */
class ConfigurationReferenceTest {

    private static final String PAGE = "docs/configuration.md";

    /** A row of a table: its first cell's keys, in backticks. */
    private static final Pattern ROW = Pattern.compile("(?m)^\\| ((?:`[^`]+`(?: \\(\\*starter\\*\\))?(?:, )?)+) \\|");

    private static final Pattern KEY = Pattern.compile("`([^`]+)`( \\(\\*starter\\*\\))?");

    private static Set<String> documented;
    private static Set<String> starterOnly;

    @BeforeAll
    static void readThePage() throws Exception {
        String page = Files.readString(DocumentationExamples.PROJECT.resolve(PAGE));
        documented = new TreeSet<>();
        starterOnly = new TreeSet<>();
        String section = "";
        for (String line : page.split("\n")) {
            if (line.startsWith("## ")) {
                section = line;
            }
            Matcher row = ROW.matcher(line);
            if (!row.find()) {
                continue;
            }
            Matcher key = KEY.matcher(row.group(1));
            while (key.find()) {
                // the TLS table names the keys of any port's TLS section, without the port's prefix
                String name = section.equals("## TLS") ? "tls." + key.group(1) : key.group(1);
                String normal = name.replace(".NAME", "").replace("[i]", "");
                if (name.startsWith("tollgate.") || key.group(2) != null) {
                    starterOnly.add(normal);
                } else {
                    documented.add(normal);
                }
            }
        }
    }

    @Test
    void everyKeyTheServerReadsHasARow() {
        Set<String> read = keys(ServerSections.TOP);

        assertThat(read).hasSizeGreaterThan(80);
        assertThat(documented).as("the keys of %s's tables", PAGE).containsAll(read);
    }

    @Test
    void everyRowNamesAKeyTheServerOrTheStarterReads() {
        Set<String> read = keys(ServerSections.TOP);

        assertThat(read).as("the keys the server reads").containsAll(documented);
        assertThat(starterOnly)
                .as("the starter's own keys, which its metadata test checks")
                .contains("tollgate.enabled", "redis.use-application-redis");
    }

    @Test
    void theDefaultsInTheTablesAreTheServersDefaults() throws Exception {
        ServerConfig plain = ServerConfig.parse(
                """
                server:
                  upstream: http://127.0.0.1:9000
                redis:
                  uri: redis://127.0.0.1:6379
                envoy:
                  config: %s
                overload:
                  enabled: true
                """.formatted(DocumentationExamples.PROJECT.resolve("examples/envoy/ratelimit")), "t.yaml");
        RedisSettings redis = ((RedisStoreProvider.Settings) plain.store()).redis();
        OverloadProtection.Settings overload = plain.overload();
        TopKeysSettings top = plain.topKeys();
        String page = Files.readString(DocumentationExamples.PROJECT.resolve(PAGE));

        assertDefault(page, "server.host", plain.host());
        assertDefault(page, "server.port", plain.port());
        assertDefault(page, "server.shutdown-timeout", plain.shutdownTimeout());
        assertDefault(page, "server.idle-timeout", plain.idleTimeout());
        assertDefault(page, "server.request-head-timeout", plain.listeners().headTimeout());
        assertDefault(page, "server.max-connections", plain.listeners().maxConnections());
        assertDefault(page, "server.upstream-timeout", plain.upstreamTimeout());
        assertDefault(page, "server.max-body-size", plain.maxBodyBytes() / (1024 * 1024) + "MiB");
        assertDefault(page, "server.warm-up", plain.warmUp());
        assertDefault(page, "server.management-host", ServerConfig.DEFAULT_MANAGEMENT_HOST);
        assertDefault(page, "server.decision-host", ServerConfig.DEFAULT_DECISION_HOST);
        assertDefault(page, "envoy.port", plain.envoy().port());
        assertDefault(page, "envoy.host", plain.envoy().host());
        assertDefault(page, "redis.timeout", redis.timeout());
        assertDefault(page, "redis.key-prefix", redis.keyPrefix());
        assertDefault(page, "redis.failure-policy", redis.failurePolicy().name().toLowerCase(Locale.ROOT));
        assertDefault(page, "redis.batching", redis.batching());
        assertDefault(page, "redis.require-redis-at-start", redis.requireRedisAtStart());
        assertDefault(page, "redis.deny-cache-max-age", redis.denyCacheMaxAge());
        assertDefault(page, "memory.maximum-keys", MemoryStoreProvider.Settings.DEFAULTS.maximumKeys());
        assertDefault(page, "top-keys.enabled", top.enabled());
        assertDefault(page, "top-keys.show", top.show().name().toLowerCase(Locale.ROOT));
        assertDefault(page, "top-keys.capacity", top.capacity());
        assertDefault(page, "overload.min-limit", overload.minLimit());
        assertDefault(page, "overload.initial-limit", overload.initialLimit());
        assertDefault(page, "overload.max-limit", overload.maxLimit());
        assertDefault(page, "overload.critical-reserve", overload.criticalReserve());
        assertDefault(page, "overload.default-reserve", overload.defaultReserve());
        assertDefault(page, "overload.max-wait", overload.maxWait());
        assertDefault(page, "overload.retry-after", overload.retryAfter());
        assertDefault(page, "envoy.x-ratelimit-headers", plain.envoy().setup().xRateLimitHeaders());
        assertDefault(page, "envoy.shadow-mode", plain.envoy().setup().shadowMode());
    }

    @Test
    void theDefaultsOfQuotasConcurrencyLimitsAndRulesAreTheServersDefaults() throws Exception {
        ServerConfig file = ServerConfig.parse("""
                server:
                  upstream: http://127.0.0.1:9000
                policies:
                  per-client:
                    limits:
                      - capacity: 10
                        refill: 5/s
                concurrency-limits:
                  exports:
                    max-in-flight: 5
                rules:
                  - policy: per-client
                    concurrency-limit: exports
                envoy:
                  quota:
                    policy: per-client
                """, "t.yaml");
        QuotaSettings quota = file.envoy().setup().quota();
        Rule rule = file.rules().get(0);
        String page = Files.readString(DocumentationExamples.PROJECT.resolve(PAGE));

        assertDefault(page, "envoy.quota.report-interval", quota.reportInterval());
        assertDefault(page, "envoy.quota.assignment-ttl", quota.assignmentTimeToLive());
        assertDefault(page, "envoy.quota.abandon-after", quota.abandonAfter());
        assertDefault(page, "concurrency-limits.NAME.lease", rule.inFlight().lease());
        assertDefault(page, "rules[i].cost", rule.cost());
        assertDefault(page, "rules[i].dry-run", rule.dryRun());
    }

    /** The default cell of {@code key}'s row starts with the value the code uses, written as the page writes it. */
    private static void assertDefault(String page, String key, Object actual) {
        Matcher row = Pattern.compile("(?m)^\\| `" + Pattern.quote(key) + "` \\|[^|]*\\| ([^|]*) \\|")
                .matcher(page);
        assertThat(row.find()).as("a row for %s", key).isTrue();
        String cell = row.group(1).replace("`", "");
        String expected = actual instanceof Duration duration ? written(duration) : String.valueOf(actual);
        assertThat(cell).as("the default of %s", key).startsWith(expected);
    }

    /** A duration as the page writes it: its largest whole unit. */
    private static String written(Duration duration) {
        long millis = duration.toMillis();
        if (millis % 60_000 == 0) {
            return millis / 60_000 + "m";
        }
        return millis % 1_000 == 0 ? millis / 1_000 + "s" : millis + "ms";
    }

    /**
     * Every key under {@code section}, as the page writes it without names and indexes ({@code
     * policies.limits.capacity}); a port's TLS section is one key, its own keys written once under {@code tls}.
     */
    private static Set<String> keys(ConfigSection section) {
        Set<String> keys = new TreeSet<>();
        collect("", section, keys);
        return keys;
    }

    private static void collect(String prefix, ConfigSection section, Set<String> keys) {
        for (String key : section.keys()) {
            String path = prefix + key;
            ConfigSection inner = section.section(key);
            if (inner == null) {
                keys.add(path);
            } else if (inner.name().equals("tls")) {
                keys.add(path);
                collect("tls.", inner, keys);
            } else {
                collect(path + ".", inner, keys);
            }
        }
    }
}
