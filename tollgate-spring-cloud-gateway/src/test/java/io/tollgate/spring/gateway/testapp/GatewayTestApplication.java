package io.tollgate.spring.gateway.testapp;

import java.util.Objects;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud Gateway application whose routes (application-gateway.yml, or the tests' properties) go to
 * a local upstream and are rate limited per user, the X-User header.
 */
@SpringBootApplication
public class GatewayTestApplication {

    /** The key of a request: its X-User header, or "anonymous". */
    @Bean
    KeyResolver userKeyResolver() {
        return exchange -> Mono.just(
                Objects.requireNonNullElse(exchange.getRequest().getHeaders().getFirst("X-User"), "anonymous"));
    }
}
