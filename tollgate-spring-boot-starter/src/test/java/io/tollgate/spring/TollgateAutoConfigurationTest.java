package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.CalendarQuota;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.LimiterOfItsOwn;
import io.tollgate.fixtures.LoggedLines;
import io.tollgate.http.PolicySource;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import io.tollgate.http.ResponseCost;
import io.tollgate.http.Rule;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.servlet.TollgateFilter;
import io.tollgate.testing.FreePorts;
import io.tollgate.testing.RedisExtension;
import io.tollgate.top.HeavyHitters;
import io.tollgate.top.TopKey;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** What the auto-configuration creates for which properties, and how it fails on bad ones. */
class TollgateAutoConfigurationTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String[] POLICY = {
        "tollgate.policies.per-user.limits[0].capacity=10", "tollgate.policies.per-user.limits[0].refill=5/s"
    };

    private final WebApplicationContextRunner runner =
            new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(TollgateAutoConfiguration.class));

    @RegisterExtension
    final LoggedLines keyCountsLog = new LoggedLines(KeyCounts.class);

    private final ReactiveWebApplicationContextRunner reactiveRunner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TollgateAutoConfiguration.class));

    @Test
    void withNothingSetTheLimiterIsInMemoryAndTheFilterIsOff() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RateLimiter.class).hasSingleBean(RequestLimiter.class);
            assertThat(context.getBean(RateLimiter.class)).isInstanceOf(InMemoryRateLimiter.class);
            assertThat(filter(context.getBean("tollgateFilter")).isEnabled()).isFalse();
        });
    }

    @Test
    void whoIsLimitedIsCountedUnlessTurnedOffAndTheEndpointSaysHowToTurnItOn() {
        runner.withPropertyValues(POLICY)
                .run(context ->
                        assertThat(context.getBean(KeyCounts.class).top()).isNotNull());
        runner.withPropertyValues(POLICY)
                .withPropertyValues("tollgate.top-keys.enabled=false")
                .run(context -> {
                    assertThat(context.getBean(KeyCounts.class).top()).isNull();
                    assertThatThrownBy(() ->
                                    context.getBean(TollgateEndpoint.class).top("top", "per-user", null, null, null))
                            .isInstanceOf(InvalidEndpointRequestException.class)
                            .hasMessage(
                                    "this application does not count who it limits: set tollgate.top-keys.enabled=true");
                });
        runner.withPropertyValues(POLICY)
                .withPropertyValues("tollgate.top-keys.capacity=32")
                .run(context -> assertThat(
                                context.getBean(KeyCounts.class).top().capacity())
                        .isEqualTo(32));
    }

    @Test
    void theApplicationsOwnCallsToTheLimiterAreCountedAsTheRulesAre() {
        runner.withPropertyValues(POLICY).run(context -> {
            RateLimiter limiter = context.getBean(RateLimiter.class);
            Policy direct = Policy.of("direct", Limit.of(1, Rate.perMinute(1)));

            limiter.tryAcquire("carol", direct);
            limiter.tryAcquire("carol", direct); // refused

            HeavyHitters.Report refused = context.getBean(KeyCounts.class)
                    .top()
                    .top("direct", HeavyHitters.Measure.REFUSED, HeavyHitters.Window.ONE_MINUTE, 10)
                    .report();
            assertThat(refused.keys()).extracting(TopKey::key).containsExactly("carol");
        });
    }

    @Test
    void aLimiterOfTheApplicationsOwnThatTellsNoListenerIsNotCountedAndTheLogSaysSo() {
        RateLimiter memory = InMemoryRateLimiter.create();
        RateLimiter own = new LimiterOfItsOwn(memory, "OwnLimiter");

        runner.withPropertyValues(POLICY).withBean(RateLimiter.class, () -> own).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(KeyCounts.class).top()).isNull();
        });
        assertThat(keyCountsLog.lines())
                .extracting(LogRecord::getMessage)
                .anySatisfy(
                        line -> assertThat(line).contains("tells no decision listener: who it limits is not counted"));
    }

    @Test
    void theDocumentedNameOfIpv6GroupingBinds() {
        runner.withPropertyValues("tollgate.client-ip.group-ipv6-by-64=true").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(TollgateProperties.class).clientIp().groupIpv6By64())
                    .isTrue();
        });
    }

    @Test
    void withRulesTheFilterIsOnAtTheConfiguredOrder() {
        runner.withPropertyValues(POLICY)
                .withPropertyValues("tollgate.rules[0].policy=per-user", "tollgate.filter.order=-110")
                .run(context -> {
                    FilterRegistrationBean<?> filter = filter(context.getBean("tollgateFilter"));
                    assertThat(filter.isEnabled()).isTrue();
                    assertThat(filter.getOrder()).isEqualTo(-110);
                    assertThat(filter.getFilter()).isInstanceOf(TollgateFilter.class);
                    assertThat(context.getBean(RequestLimiter.class).rules()).hasSize(1);
                });
    }

    @Test
    void quotasConcurrencyLimitsAndResponseCostsBindToTheRules() {
        runner.withPropertyValues(
                        "tollgate.policies.llm.limits[0].capacity=10000",
                        "tollgate.policies.llm.limits[0].refill=10000/m",
                        "tollgate.policies.llm.quotas[0].count=1000000",
                        "tollgate.policies.llm.quotas[0].period=month",
                        "tollgate.policies.llm.quotas[0].zone=Europe/Paris",
                        "tollgate.concurrency-limits.streams.max-in-flight=3",
                        "tollgate.concurrency-limits.streams.lease=10s",
                        "tollgate.rules[0].policy=llm",
                        "tollgate.rules[0].concurrency-limit=streams",
                        "tollgate.rules[0].response-cost.header=X-Tokens-Used",
                        "tollgate.rules[0].response-cost.refund-statuses=5xx",
                        "tollgate.rules[1].path=/exports/**",
                        "tollgate.rules[1].concurrency-limit=streams")
                .run(context -> {
                    List<Rule> rules = context.getBean(RequestLimiter.class).rules();

                    assertThat(rules.get(0).policy().quotas())
                            .containsExactly(
                                    CalendarQuota.of(1_000_000, CalendarQuota.Period.MONTH, ZoneId.of("Europe/Paris")));
                    assertThat(rules.get(0).inFlight())
                            .isEqualTo(new ConcurrencyLimit("streams", 3, Duration.ofSeconds(10)));
                    assertThat(rules.get(0).responseCost())
                            .isEqualTo(ResponseCost.fromHeader("X-Tokens-Used").refunding("5xx"));
                    assertThat(rules.get(1).policy()).isNull();
                    assertThat(rules.get(1).name()).isEqualTo("streams");
                });
    }

    @Test
    void theTiersOfTheDocsBindToARuleThatChoosesPoliciesPerRequest() {
        String[] properties = DocumentationExamples.blocks("docs/spring-boot.md", "properties").stream()
                .filter(block -> block.contains("policy-from"))
                .findFirst()
                .orElseThrow()
                .strip()
                .split("\n");

        runner.withPropertyValues(properties).run(context -> {
            Rule rule = context.getBean(RequestLimiter.class).rules().get(0);

            assertThat(rule.policy().name()).isEqualTo("free");
            assertThat(rule.choice().source())
                    .isInstanceOfSatisfying(
                            PolicySource.KeyTable.class,
                            table -> assertThat(table.plans()).containsExactly(Map.entry("k-123", "gold")));
            assertThat(rule.choice().allow()).containsExactly("k-monitor");
            assertThat(rule.choice().deny()).containsExactly("k-abuser", "198.51.100.0/24");
        });
    }

    @Test
    void aUriOfItsOwnPutsTheBucketsInRedis() {
        runner.withPropertyValues("tollgate.redis.uri=" + redis.server().uri(), "tollgate.redis.timeout=200ms")
                .run(context -> assertThat(context.getBean(RateLimiter.class)).isInstanceOf(RedisRateLimiter.class));
    }

    @Test
    void batchingIsOnUnlessTurnedOff() {
        runner.withPropertyValues("tollgate.redis.uri=" + redis.server().uri())
                .run(context -> assertThat(context.getBean(RateLimiter.class))
                        .asString()
                        .endsWith(", batching]"));
        runner.withPropertyValues("tollgate.redis.uri=" + redis.server().uri(), "tollgate.redis.batching=false")
                .run(context -> assertThat(context.getBean(RateLimiter.class))
                        .isInstanceOf(RedisRateLimiter.class)
                        .asString()
                        .doesNotContain("batching"));
    }

    @Test
    void theApplicationsRedisIsSharedWhenSpringDataRedisIsThere() {
        runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
                .withPropertyValues(
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + redis.server().port())
                .run(context -> {
                    RateLimiter limiter = context.getBean(RateLimiter.class);
                    assertThat(limiter).isInstanceOf(RedisRateLimiter.class);
                    assertThat(((RedisRateLimiter) limiter)
                                    .ping()
                                    .toCompletableFuture()
                                    .join())
                            .isEmpty();
                });
    }

    @Test
    void theApplicationsRedisIsLeftAloneWhenAsked() {
        runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
                .withPropertyValues("tollgate.redis.use-application-redis=false")
                .run(context -> assertThat(context.getBean(RateLimiter.class)).isInstanceOf(InMemoryRateLimiter.class));
    }

    @Test
    void anApplicationsOwnLimiterWins() {
        runner.withUserConfiguration(OwnLimiter.class)
                .run(context -> assertThat(context.getBean(RateLimiter.class)).isSameAs(OwnLimiter.LIMITER));
    }

    @Test
    void customizersAdjustTheLimitersBeforeTheyAreBuilt() {
        runner.withPropertyValues(POLICY)
                .withPropertyValues("tollgate.redis.uri=" + redis.server().uri())
                .withUserConfiguration(Customizers.class)
                .run(context -> {
                    assertThat(context.getBean(RequestLimiter.class).rules())
                            .extracting(rule -> rule.path().toString())
                            .containsExactly("/added/in/code");
                    assertThat(Customizers.redisCustomized).isTrue();
                });
    }

    @Test
    void disabledItCreatesNothing() {
        runner.withPropertyValues("tollgate.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(RateLimiter.class)
                        .doesNotHaveBean(RequestLimiter.class)
                        .doesNotHaveBean("tollgateFilter"));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "tollgate.rules[0].policy=per-usr | tollgate.rules[0].policy: unknown policy 'per-usr'; defined: per-user",
                "tollgate.rules[0].key=cookie:sid | tollgate.rules[0].key: invalid key 'cookie:sid'",
                "tollgate.rules[0].on-missing-key=ignore | tollgate.rules[0].on-missing-key: invalid on-missing-key 'ignore'",
                "tollgate.rules[0].path=api/** | tollgate.rules[0].path: path pattern must start with '/'",
                "tollgate.policies.per-user.limits[0].refill=fast | tollgate.policies.per-user.limits[0].refill: invalid rate 'fast'",
                "tollgate.policies.per-user.limits[0].capacity=0 | tollgate.policies.per-user.limits[0]: capacity must be at least 1, was 0",
                "tollgate.client-ip.trusted-proxies=10.0.0.0/40 | tollgate.client-ip.trusted-proxies: invalid trusted proxy '10.0.0.0/40'",
                "tollgate.responses.refusal-status=200 | tollgate.responses.refusal-status: must be a 4xx or 5xx status, was 200",
                "tollgate.memory.maximum-keys=0 | tollgate.memory.maximum-keys: must be at least 1, was 0",
                "tollgate.redis.expected-instances=0 | tollgate.redis.expected-instances: must be 1 to 10000, was 0",
                "tollgate.redis.uri=http://h:1 | tollgate.redis.uri: must be a redis://, rediss:// or redis-sentinel:// URI",
                "tollgate.redis.timeout=-1s | tollgate.redis.timeout: must be longer than zero, was PT-1S",
                "tollgate.policies.other.limits[0].refill=1/s | tollgate.policies.other.limits[0].capacity: is required",
            })
    void anInvalidPropertyFailsTheStartNamingIt(String property, String message) {
        runner.withPropertyValues(POLICY)
                .withPropertyValues("tollgate.rules[0].policy=per-user")
                .withPropertyValues(property)
                .run(context -> {
                    assertThat(context).hasFailed();
                    InvalidTollgatePropertiesException cause = cause(context.getStartupFailure());
                    assertThat(cause).hasMessageStartingWith(message);
                    FailureAnalysis analysis = new TollgateFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).startsWith("Tollgate cannot start: " + message);
                });
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "tollgate.polices.per-user.limits[0].capacity=10 | tollgate: unknown setting 'polices'; known: client-ip,"
                        + " concurrency-limits, enabled, filter, gateway, memory, overload, paths, policies, redis, responses, rules,"
                        + " store,"
                        + " top-keys, warm-up",
                "tollgate.redis.timout=1s | tollgate.redis: unknown setting 'timout'; known: batching, cluster-uris,",
                "tollgate.policies.per-user.limits[0].refil=1/s | tollgate.policies.per-user.limits[0]: unknown setting"
                        + " 'refil'; known: capacity, refill",
                "tollgate.rules[0].pth=/x | tollgate.rules[0]: unknown setting 'pth'; known: allow, concurrency-limit, cost, deny,",
            })
    void aMisspeltPropertyFailsTheStartNamingItAndTheKnownOnes(String property, String message) {
        runner.withPropertyValues(POLICY)
                .withPropertyValues("tollgate.rules[0].policy=per-user")
                .withPropertyValues(property)
                .run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis =
                            new UnknownTollgatePropertyFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).startsWith("Tollgate cannot start: " + message);
                });
    }

    @Test
    void aRedisRequiredAtStartThatCannotBeReachedFailsTheStartSayingWhy() throws Exception {
        int closed = FreePorts.nobodyListens();
        runner.withPropertyValues(
                        "tollgate.redis.uri=redis://127.0.0.1:" + closed, "tollgate.redis.require-redis-at-start=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(cause(context.getStartupFailure()))
                            .hasMessageStartingWith(
                                    "tollgate.redis.require-redis-at-start is true: Redis is required at"
                                            + " start (requireRedisAtStart), but it could not be reached: not connected to"
                                            + " Redis at 127.0.0.1:" + closed + ": Connection refused");
                });
    }

    @Test
    void aCostAboveTheCapacityFailsTheStart() {
        runner.withPropertyValues(POLICY)
                .withPropertyValues("tollgate.rules[0].policy=per-user", "tollgate.rules[0].cost=11")
                .run(context -> assertThat(cause(context.getStartupFailure()))
                        .hasMessageStartingWith("tollgate.rules[0].cost: cost 11 exceeds the smallest capacity (10)"));
    }

    @Test
    void aValueOfTheWrongTypeFailsTheStartNamingTheProperty() {
        runner.withPropertyValues(POLICY)
                .withPropertyValues("tollgate.rules[0].policy=per-user", "tollgate.rules[0].cost=ten")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasStackTraceContaining("tollgate.rules[0].cost");
                });
    }

    @Test
    void aRateLimitAnnotationOnAnUnknownPolicyFailsTheStart() {
        runner.withPropertyValues(POLICY)
                .withUserConfiguration(BadAnnotation.class)
                .run(context -> assertThat(cause(context.getStartupFailure()))
                        .hasMessage("@RateLimit(policy = \"per-tenant\") on Misconfigured.list(): unknown policy"
                                + " 'per-tenant'; defined in tollgate.policies: per-user"));
    }

    @Test
    void aRateLimitAnnotationWithACostAboveTheCapacityFailsTheStart() {
        runner.withPropertyValues(POLICY)
                .withUserConfiguration(CostlyAnnotation.class)
                .run(context -> assertThat(cause(context.getStartupFailure()))
                        .hasMessageStartingWith(
                                "@RateLimit(policy = \"per-user\") on Costly.export(): cost 50 exceeds"));
    }

    @Test
    void aRateLimitAnnotationWithAnUnknownMissingKeyChoiceFailsTheStart() {
        runner.withPropertyValues(POLICY)
                .withUserConfiguration(CarelessAnnotation.class)
                .run(context -> assertThat(cause(context.getStartupFailure()))
                        .hasMessageStartingWith("@RateLimit(policy = \"per-user\") on Careless.list(): invalid"
                                + " on-missing-key 'ignore'"));
    }

    @Test
    void inAReactiveApplicationTheWebFilterTakesTheServletFiltersPlace() {
        reactiveRunner
                .withPropertyValues(POLICY)
                .withPropertyValues("tollgate.rules[0].policy=per-user", "tollgate.filter.order=-110")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean("tollgateFilter");
                    assertThat(context.getBean(TollgateWebFilter.class).getOrder())
                            .isEqualTo(-110);
                    assertThat(context)
                            .hasSingleBean(RateLimitExceptionHandler.class)
                            .hasSingleBean(ServerWebExchangeContextFilter.class)
                            .doesNotHaveBean(RateLimitExceptionResolver.class);
                });
    }

    @Test
    void aRateLimitAnnotationOnAMethodThatCannotWaitWithoutBlockingFailsAReactiveStart() {
        reactiveRunner
                .withPropertyValues(POLICY)
                .withUserConfiguration(BlockingAnnotation.class)
                .run(context -> assertThat(cause(context.getStartupFailure()))
                        .hasMessage("@RateLimit on Blocking.list() in a WebFlux application: the method returns Map,"
                                + " but must return a reactive type (Mono, Flux) so that the limit is checked"
                                + " without blocking an event loop"));
    }

    @Test
    void aRateLimitAnnotationOnAMonoStartsAReactiveApplication() {
        reactiveRunner
                .withPropertyValues(POLICY)
                .withUserConfiguration(ReactiveAnnotation.class)
                .run(context -> assertThat(context).hasNotFailed());
    }

    private static InvalidTollgatePropertiesException cause(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof InvalidTollgatePropertiesException invalid) {
                return invalid;
            }
        }
        throw new AssertionError("no InvalidTollgatePropertiesException in " + failure, failure);
    }

    private static FilterRegistrationBean<?> filter(Object bean) {
        return (FilterRegistrationBean<?>) bean;
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLimiter {
        static final RateLimiter LIMITER = InMemoryRateLimiter.create();

        @Bean
        RateLimiter myLimiter() {
            return LIMITER;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Customizers {
        static volatile boolean redisCustomized;

        @Bean
        TollgateRequestLimiterCustomizer addRule(RequestLimiterConfig config) {
            return builder ->
                    builder.rule(io.tollgate.http.Rule.builder(config.policies().get(0))
                            .path("/added/in/code")
                            .build());
        }

        @Bean
        TollgateRedisCustomizer perPolicyFailure() {
            return builder -> {
                builder.failurePolicy("per-user", io.tollgate.FailurePolicy.DENY);
                redisCustomized = true;
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadAnnotation {
        @Bean
        Misconfigured misconfigured() {
            return new Misconfigured();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CarelessAnnotation {
        @Bean
        Careless careless() {
            return new Careless();
        }
    }

    @RestController
    static class Careless {
        @RateLimit(policy = "per-user", key = "#request.getHeader('X-User')", onMissingKey = "ignore")
        @GetMapping("/list")
        Map<String, String> list() {
            return Map.of();
        }
    }

    @RestController
    static class Misconfigured {
        @RateLimit(policy = "per-tenant")
        @GetMapping("/list")
        Map<String, String> list() {
            return Map.of();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CostlyAnnotation {
        @Bean
        Costly costly() {
            return new Costly();
        }
    }

    @RestController
    static class Costly {
        @RateLimit(policy = "per-user", cost = 50)
        @GetMapping("/export")
        Map<String, String> export() {
            return Map.of();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BlockingAnnotation {
        @Bean
        Blocking blocking() {
            return new Blocking();
        }
    }

    @RestController
    static class Blocking {
        @RateLimit(policy = "per-user")
        @GetMapping("/list")
        Map<String, String> list() {
            return Map.of();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ReactiveAnnotation {
        @Bean
        Streaming streaming() {
            return new Streaming();
        }
    }

    @RestController
    static class Streaming {
        @RateLimit(policy = "per-user")
        @GetMapping("/one")
        Mono<String> one() {
            return Mono.just("one");
        }

        @RateLimit(policy = "per-user")
        @GetMapping("/many")
        Flux<String> many() {
            return Flux.just("many");
        }
    }
}
