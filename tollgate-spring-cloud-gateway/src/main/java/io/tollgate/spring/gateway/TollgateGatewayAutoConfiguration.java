package io.tollgate.spring.gateway;

import io.tollgate.spring.RulesInForce;
import io.tollgate.spring.TollgateAutoConfiguration;
import io.tollgate.spring.TollgateProperties;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * Gives a Spring Cloud Gateway application the {@link TollgateGatewayRateLimiter}, bean {@code
 * tollgateRateLimiter}, on the limiter and policies of Tollgate's starter ({@code tollgate.*}). It is the
 * primary {@code RateLimiter}: a {@code RequestRateLimiter} filter that names none uses it, and Spring Cloud
 * Gateway's own Redis limiter, if the application has one, stays available as {@code #{@redisRateLimiter}}.
 * {@code tollgate.gateway.gateway-headers=false} leaves out Spring Cloud Gateway's {@code X-RateLimit-*}
 * header fields.
 */
@AutoConfiguration(
        after = TollgateAutoConfiguration.class,
        beforeName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnClass(RateLimiter.class)
@ConditionalOnBooleanProperty(name = "tollgate.enabled", matchIfMissing = true)
public final class TollgateGatewayAutoConfiguration {

    /** The rate limiter that routes name as {@code #{@tollgateRateLimiter}}. */
    @Bean
    @Primary
    @ConditionalOnBean(RulesInForce.class)
    @ConditionalOnMissingBean(name = "tollgateRateLimiter")
    TollgateGatewayRateLimiter tollgateRateLimiter(
            RulesInForce rules, ConfigurationService configuration, TollgateProperties properties) {
        return new TollgateGatewayRateLimiter(
                rules, configuration, properties.gateway().gatewayHeaders());
    }
}
