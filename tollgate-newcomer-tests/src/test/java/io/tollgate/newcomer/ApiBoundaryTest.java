package io.tollgate.newcomer;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The API is drawn on purpose: the public types outside {@code internal} packages are exactly these, every
 * {@code internal} package says it carries no compatibility promise, no main source leans on another
 * library's internals, and test fixtures stay out of the jars.
 */
class ApiBoundaryTest {

    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "^public (?:final |abstract |sealed |non-sealed )*(?:class|interface|record|enum|@interface) (\\w+)",
            Pattern.MULTILINE);
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern FOREIGN_INTERNAL_IMPORT =
            Pattern.compile("^import (?!io\\.tollgate\\.)[\\w.]*\\.internal\\.[\\w.]+;", Pattern.MULTILINE);

    private static final List<String> API = List.of(
            "io.tollgate.BucketState",
            "io.tollgate.CalendarQuota",
            "io.tollgate.ConcurrencyLimit",
            "io.tollgate.Decision",
            "io.tollgate.DecisionEvent",
            "io.tollgate.DecisionListener",
            "io.tollgate.DecisionListeners",
            "io.tollgate.Degradation",
            "io.tollgate.FailurePolicy",
            "io.tollgate.InFlightSlots",
            "io.tollgate.InMemoryRateLimiter",
            "io.tollgate.Limit",
            "io.tollgate.LimiterArguments",
            "io.tollgate.Permit",
            "io.tollgate.Policy",
            "io.tollgate.PolicyArithmetic",
            "io.tollgate.Priority",
            "io.tollgate.Propagation",
            "io.tollgate.Rate",
            "io.tollgate.RateLimiter",
            "io.tollgate.TimeSource",
            "io.tollgate.TokenBucket",
            "io.tollgate.WarmUpKeys",
            "io.tollgate.config.ConfigException",
            "io.tollgate.config.ConfigNode",
            "io.tollgate.config.ConfigSection",
            "io.tollgate.guard.BucketStore",
            "io.tollgate.guard.CircuitBreaker",
            "io.tollgate.guard.GuardSettings",
            "io.tollgate.guard.GuardedRateLimiter",
            "io.tollgate.guard.MetricsRecorder",
            "io.tollgate.guard.PermitStore",
            "io.tollgate.guard.StoreAnswer",
            "io.tollgate.guard.StoreFailure",
            "io.tollgate.guard.StoreReply",
            "io.tollgate.http.AdminViews",
            "io.tollgate.http.ClientIpResolver",
            "io.tollgate.http.ClientKey",
            "io.tollgate.http.ConfigSchema",
            "io.tollgate.http.HttpRequestView",
            "io.tollgate.http.MicrometerRequestMetrics",
            "io.tollgate.http.MissingKey",
            "io.tollgate.http.NormalPath",
            "io.tollgate.http.OverloadProtection",
            "io.tollgate.http.PathPattern",
            "io.tollgate.http.PathSettings",
            "io.tollgate.http.PolicyChoice",
            "io.tollgate.http.PolicySource",
            "io.tollgate.http.Refusal",
            "io.tollgate.http.RequestDecision",
            "io.tollgate.http.RequestLimiter",
            "io.tollgate.http.RequestLimiterConfig",
            "io.tollgate.http.ResponseCost",
            "io.tollgate.http.Rule",
            "io.tollgate.http.RuleOutcome",
            "io.tollgate.http.RuleSections",
            "io.tollgate.http.YamlConfig",
            "io.tollgate.overload.OverloadGuard",
            "io.tollgate.redis.MicrometerMetrics",
            "io.tollgate.redis.RedisConnection",
            "io.tollgate.redis.RedisCustomization",
            "io.tollgate.redis.RedisRateLimiter",
            "io.tollgate.runtime.Stores",
            "io.tollgate.runtime.TollgateRuntime",
            "io.tollgate.server.Main",
            "io.tollgate.server.ServerConfig",
            "io.tollgate.server.TollgateServer",
            "io.tollgate.servlet.ServletRequestView",
            "io.tollgate.servlet.TollgateFilter",
            "io.tollgate.spi.OpenedStore",
            "io.tollgate.spi.StoreContext",
            "io.tollgate.spi.StoreProvider",
            "io.tollgate.spi.StoreSettings",
            "io.tollgate.spi.SummaryExchange",
            "io.tollgate.spring.InvalidTollgatePropertiesException",
            "io.tollgate.spring.RateLimit",
            "io.tollgate.spring.RateLimitExceededException",
            "io.tollgate.spring.RateLimitExceptionHandler",
            "io.tollgate.spring.RateLimitExceptionResolver",
            "io.tollgate.spring.RateLimits",
            "io.tollgate.spring.RulesInForce",
            "io.tollgate.spring.TollgateAutoConfiguration",
            "io.tollgate.spring.TollgateEndpoint",
            "io.tollgate.spring.TollgateHealthIndicator",
            "io.tollgate.spring.TollgateProperties",
            "io.tollgate.spring.TollgateRedisCustomizer",
            "io.tollgate.spring.TollgateRequestLimiterCustomizer",
            "io.tollgate.spring.TollgateWebFilter",
            "io.tollgate.spring.gateway.TollgateGatewayAutoConfiguration",
            "io.tollgate.spring.gateway.TollgateGatewayRateLimiter",
            "io.tollgate.top.HeavyHitters",
            "io.tollgate.top.KeyDisplay",
            "io.tollgate.top.TopKey",
            "io.tollgate.top.TopKeys",
            "io.tollgate.top.TopKeysSettings");

    @Test
    void publicTypesOutsideInternalPackagesAreExactlyTheApi() throws IOException {
        List<String> publicTypes = new ArrayList<>();
        for (Path source : publishedMainSources()) {
            String text = Files.readString(source);
            Matcher type = PUBLIC_TYPE.matcher(text);
            String pkg = packageOf(text);
            if (type.find() && !pkg.contains(".internal")) {
                publicTypes.add(pkg + "." + type.group(1));
            }
        }

        assertThat(publicTypes).containsExactlyInAnyOrderElementsOf(API);
    }

    @Test
    void everyInternalPackageSaysItCarriesNoCompatibilityPromise() throws IOException {
        List<Path> infos = publishedMainSources().stream()
                .filter(file -> file.getFileName().toString().equals("package-info.java"))
                .filter(file -> file.getParent().toString().replace('\\', '/').contains("/internal"))
                .toList();

        assertThat(infos).hasSizeGreaterThanOrEqualTo(6);
        for (Path info : infos) {
            assertThat(Files.readString(info)).as("%s", info).contains("No compatibility promise");
        }
    }

    @Test
    void mainSourcesUseNoOtherLibrarysInternals() throws IOException {
        for (Path source : publishedMainSources()) {
            assertThat(FOREIGN_INTERNAL_IMPORT.matcher(Files.readString(source)).find())
                    .as("%s imports another library's internal package", source)
                    .isFalse();
        }
    }

    @Test
    void theManualClockIsATestFixtureNotPartOfTheLibrary() throws IOException {
        assertThat(publishedMainSources())
                .noneMatch(source -> source.getFileName().toString().equals("ManualTimeSource.java"));
    }

    private static String packageOf(String source) {
        Matcher pkg = PACKAGE.matcher(source);
        return pkg.find() ? pkg.group(1) : "";
    }

    private static List<Path> publishedMainSources() throws IOException {
        List<Path> sources = new ArrayList<>();
        for (String module : PublishedModules.jars()) {
            if (module.equals("tollgate-test-support")) {
                continue; // a test fixture itself: every type in it is for tests
            }
            Path main = DocumentationExamples.PROJECT.resolve(module).resolve("src/main/java");
            try (Stream<Path> files = Files.walk(main)) {
                files.filter(file -> file.toString().endsWith(".java")).forEach(sources::add);
            }
        }
        assertThat(sources).hasSizeGreaterThan(50);
        return sources;
    }
}
