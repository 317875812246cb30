package io.tollgate.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.tollgate.RateLimiter;
import io.tollgate.http.MicrometerRequestMetrics;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import io.tollgate.redis.MicrometerMetrics;
import io.tollgate.runtime.TollgateRuntime;
import io.tollgate.servlet.TollgateFilter;
import jakarta.servlet.DispatcherType;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.WebFilter;
import org.springframework.web.servlet.HandlerExceptionResolver;

/**
 * Rate limiting for a Spring Boot application, from {@code tollgate.*} ({@link TollgateProperties}):
 *
 * <ul>
 *   <li>a {@link RateLimiter}: on Redis when {@code tollgate.redis.uri} or {@code cluster-uris} is set, or
 *       when the application has a Lettuce {@code RedisConnectionFactory} (spring.data.redis.*), whose client
 *       it shares; in memory otherwise. An application's own {@code RateLimiter} bean replaces it;
 *   <li>a {@link RequestLimiter} with the policies and rules, shared by the filter and {@link RateLimit};
 *   <li>the {@link TollgateFilter}, when there are rules, at {@code tollgate.filter.order}; in a reactive
 *       (WebFlux) application the {@link TollgateWebFilter} instead;
 *   <li>{@link RateLimit @RateLimit} on Spring MVC and WebFlux controllers, and the answer to a {@link
 *       RateLimitExceededException};
 *   <li>metrics on the application's {@code MeterRegistry} when Micrometer is there;
 *   <li>a warm-up before the application reports ready, unless {@code tollgate.warm-up} is false.
 * </ul>
 *
 * <p>Every property is checked at startup; a bad one fails the start with an {@link
 * InvalidTollgatePropertiesException} that names it.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"
        })
@ConditionalOnBooleanProperty(name = "tollgate.enabled", matchIfMissing = true)
@EnableConfigurationProperties(TollgateProperties.class)
@Import({
    TollgateAutoConfiguration.Metrics.class,
    TollgateAutoConfiguration.ActuatorEndpoint.class,
    TollgateAutoConfiguration.ActuatorHealth.class,
    TollgateAutoConfiguration.CloudRefresh.class,
    ApplicationRedisConfiguration.class,
    TollgateAutoConfiguration.Web.class,
    RateLimitAnnotationsConfiguration.class
})
public final class TollgateAutoConfiguration {

    private static final System.Logger LOG = System.getLogger(TollgateAutoConfiguration.class.getName());

    /** The longest the warm-up may hold up the application's readiness. */
    private static final Duration WARM_UP_LIMIT = Duration.ofSeconds(20);

    /** The policies and rules of {@code tollgate.*}, checked. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    RequestLimiterConfig tollgateRequestLimiterConfig(TollgateProperties properties) {
        return PropertiesReader.read(properties);
    }

    /** The rules in force and their request limiter, replaced when Spring Cloud refreshes the environment. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    LiveRules tollgateLiveRules(RequestLimiterConfig config, RequestLimiter requests) {
        return new LiveRules(config, requests);
    }

    /**
     * Who is limited: the counts of the limiter's decisions, per policy and key, shared with the other instances on
     * Redis.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    KeyCounts tollgateKeyCounts(
            TollgateProperties properties, RateLimiter limiter, ObjectProvider<TollgateRuntime> runtime) {
        TollgateRuntime store = runtime.getIfAvailable();
        return store != null && store.limiter() == limiter
                ? KeyCounts.of(store, PropertiesReader.topKeys(properties))
                : KeyCounts.of(limiter, PropertiesReader.topKeys(properties));
    }

    /** The request limiter that the filter and @RateLimit share. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    RequestLimiter tollgateRequestLimiter(
            RequestLimiterConfig config,
            RateLimiter limiter,
            ObjectProvider<TollgateRequestLimiterCustomizer> customizers) {
        RequestLimiter.Builder builder = config.toBuilder(limiter);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }

    /**
     * Warms the limiter and the request limiter up ({@link RequestLimiter#warmUp}) before the application
     * reports ready: application runners run before the {@code ApplicationReadyEvent} that moves readiness
     * to accepting traffic.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnBooleanProperty(name = "tollgate.warm-up", matchIfMissing = true)
    ApplicationRunner tollgateWarmUp(RequestLimiter requests, ObjectProvider<LimiterMetrics> metrics) {
        return arguments -> {
            long start = System.nanoTime();
            boolean warm = requests.warmUp(WARM_UP_LIMIT);
            // The warm-up ran the paths real requests run, meters included: now it leaves no trace in them
            metrics.ifAvailable(limiterMetrics -> limiterMetrics.forgetWarmUp().run());
            LOG.log(
                    warm ? Level.INFO : Level.WARNING,
                    "Tollgate warmed up in {0} ms{1}",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                    warm ? "" : "; its store was not reached: deciding by the failure policy until it answers");
        };
    }

    /** The Actuator endpoint {@code tollgate}, when the application has Actuator. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Endpoint.class)
    static class ActuatorEndpoint {

        @Bean
        @ConditionalOnMissingBean
        TollgateEndpoint tollgateEndpoint(LiveRules rules, RateLimiter limiter, KeyCounts counts) {
            return new TollgateEndpoint(rules::current, limiter, counts);
        }
    }

    /**
     * Applies a changed {@code tollgate.*} when Spring Cloud refreshes the environment (its {@code
     * EnvironmentChangeEvent}), when the application has Spring Cloud Context.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
    static class CloudRefresh {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        ApplicationListener<EnvironmentChangeEvent> tollgateEnvironmentChange(
                Environment environment,
                RateLimiter limiter,
                LiveRules rules,
                ObjectProvider<TollgateRequestLimiterCustomizer> customizers,
                ObjectProvider<RateLimitInterceptor> interceptor) {
            TollgateRefresh refresh = new TollgateRefresh(environment, limiter, rules, customizers, interceptor);
            return event -> {
                if (event.getKeys().stream().anyMatch(key -> key.startsWith("tollgate."))) {
                    refresh.apply();
                }
            };
        }
    }

    /** The health indicator, component {@code tollgate}, when the application has Actuator's health. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class ActuatorHealth {

        @Bean
        @ConditionalOnMissingBean(name = "tollgateHealthIndicator")
        TollgateHealthIndicator tollgateHealthIndicator(RateLimiter limiter) {
            return new TollgateHealthIndicator(limiter);
        }
    }

    /**
     * Records decisions to the application's meter registry, if it has one. Looked up when the limiters are
     * built rather than by a condition, so that the order of the metrics auto-configurations does not matter.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        TollgateRequestLimiterCustomizer tollgateRequestMetrics(ObjectProvider<MeterRegistry> registry) {
            return builder -> registry.ifUnique(meters -> builder.metrics(MicrometerRequestMetrics.of(meters)));
        }

        /** The limiter's one recorder, made on first use when the application has one meter registry. */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        LimiterMetrics tollgateLimiterMetrics(ObjectProvider<MeterRegistry> registry) {
            AtomicReference<MicrometerMetrics> made = new AtomicReference<>();
            return new LimiterMetrics(
                    () -> {
                        MeterRegistry meters = registry.getIfUnique();
                        return meters == null
                                ? null
                                : made.updateAndGet(
                                        metrics -> metrics != null ? metrics : MicrometerMetrics.of(meters));
                    },
                    () -> {
                        MicrometerMetrics metrics = made.get();
                        if (metrics != null) {
                            metrics.forgetWarmUp();
                        }
                    });
        }
    }

    /**
     * The store, the limiter on it and the count of who it limits, as {@link StarterStore} opens them: Redis of
     * Tollgate's own, else the application's Redis, else memory, unless {@code tollgate.store} states one. One method,
     * so that the choice does not hang on the order in which configuration classes are read. Closed with the
     * application context, after everything that uses the limiter.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean(RateLimiter.class)
    TollgateRuntime tollgateStore(
            TollgateProperties properties,
            ObjectProvider<ApplicationRedisConfiguration.ApplicationRedisClient> applicationRedis,
            ObjectProvider<ApplicationRedisConfiguration.ApplicationRedisSettings> applicationRedisSettings,
            ObjectProvider<TollgateRedisCustomizer> customizers,
            ObjectProvider<LimiterMetrics> limiterMetrics) {
        LimiterMetrics metrics = limiterMetrics.getIfAvailable();
        return StarterStore.open(
                properties,
                applicationRedis,
                applicationRedisSettings,
                customizers,
                metrics == null ? null : metrics.recorder().get(),
                PropertiesReader.topKeys(properties));
    }

    /**
     * The limiter, bean {@code tollgateLimiter}, on the store of {@link #tollgateStore}, which closes it. ({@code
     * tollgateRateLimiter} is the name Spring Cloud Gateway's routes refer to, in tollgate-spring-cloud-gateway.)
     */
    @Bean(destroyMethod = "")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean(RateLimiter.class)
    RateLimiter tollgateLimiter(TollgateRuntime store) {
        return store.limiter();
    }

    /**
     * Where the limiter reports its work, when the application has one meter registry (else the supplier gives
     * null), and how to forget what a warm-up recorded there.
     */
    record LimiterMetrics(Supplier<MicrometerMetrics> recorder, Runnable forgetWarmUp) {}

    /** The servlet filter, when there are rules. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(FilterRegistrationBean.class)
    static class Web {

        @Bean
        @ConditionalOnMissingBean(name = "tollgateFilter")
        FilterRegistrationBean<TollgateFilter> tollgateFilter(
                TollgateProperties properties, RequestLimiterConfig config, RequestLimiter requests, LiveRules rules) {
            TollgateFilter filter = new TollgateFilter(requests);
            rules.onReplace(filter::replace);
            FilterRegistrationBean<TollgateFilter> registration = new FilterRegistrationBean<>(filter);
            registration.setName("tollgate");
            registration.setOrder(properties.filter().order());
            registration.setUrlPatterns(properties.filter().urlPatterns());
            registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
            registration.setAsyncSupported(true);
            registration.setEnabled(
                    !config.rules().isEmpty() || config.overload() != null); // nothing to filter otherwise
            return registration;
        }
    }

    /** The WebFlux filter, in a reactive web application. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(WebFilter.class)
    static class WebFlux {

        @Bean
        @ConditionalOnMissingBean(name = "tollgateWebFilter")
        TollgateWebFilter tollgateWebFilter(TollgateProperties properties, RequestLimiter requests, LiveRules rules) {
            TollgateWebFilter filter = new TollgateWebFilter(
                    requests, properties.filter().order(), properties.filter().urlPatterns());
            rules.onReplace(filter::replace);
            return filter;
        }

        /** Puts the exchange in the Reactor context, where {@code @RateLimit} on a reactive method finds it. */
        @Bean
        @ConditionalOnMissingBean
        ServerWebExchangeContextFilter tollgateExchangeContextFilter() {
            return new ServerWebExchangeContextFilter();
        }

        @Bean
        @ConditionalOnMissingBean
        RateLimitExceptionHandler tollgateRateLimitExceptionHandler(LiveRules rules) {
            return new RateLimitExceptionHandler(() -> rules.current().requests());
        }
    }

    /** The answer to refusals of {@link RateLimit @RateLimit} on Spring MVC controllers. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(HandlerExceptionResolver.class)
    static class MvcAnswers {

        @Bean
        @ConditionalOnMissingBean
        RateLimitExceptionResolver tollgateRateLimitExceptionResolver(LiveRules rules) {
            return new RateLimitExceptionResolver(() -> rules.current().requests());
        }
    }
}
