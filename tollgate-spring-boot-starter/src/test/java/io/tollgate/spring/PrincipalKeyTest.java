package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.testapp.TestApplication;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Principal;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * The filter's order decides whether an authentication filter has set the principal before Tollgate reads
 * it. A stand-in for Spring Security sits at Security's order, -100, and authenticates the user named in
 * X-User; the rule is keyed by the principal.
 */
class PrincipalKeyTest {

    /** The default order, -90: after authentication, so each user has a bucket. */
    @Nested
    @SpringBootTest(
            classes = {TestApplication.class, Authentication.class},
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "tollgate.redis.use-application-redis=false",
                "tollgate.policies.per-principal.limits[0].capacity=1",
                "tollgate.policies.per-principal.limits[0].refill=1/h",
                "tollgate.rules[0].path=/api/**",
                "tollgate.rules[0].key=principal",
                "tollgate.rules[0].policy=per-principal"
            })
    @ActiveProfiles("ratelimited")
    @DirtiesContext
    class AfterAuthentication {

        @LocalServerPort
        int port;

        @Test
        void eachAuthenticatedUserHasABucket() throws Exception {
            int alice = get(port, "alice").statusCode();
            int aliceAgain = get(port, "alice").statusCode();
            int bob = get(port, "bob").statusCode();

            assertThat(alice).isEqualTo(200);
            assertThat(aliceAgain).isEqualTo(429);
            assertThat(bob).isEqualTo(200);
        }
    }

    /** Before Security's order: nobody is authenticated yet, so the principal rule finds no key and skips. */
    @Nested
    @SpringBootTest(
            classes = {TestApplication.class, Authentication.class},
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "tollgate.filter.order=-110",
                "tollgate.redis.use-application-redis=false",
                "tollgate.policies.per-principal.limits[0].capacity=1",
                "tollgate.policies.per-principal.limits[0].refill=1/h",
                "tollgate.rules[0].path=/api/**",
                "tollgate.rules[0].key=principal",
                "tollgate.rules[0].policy=per-principal"
            })
    @ActiveProfiles("ratelimited")
    @DirtiesContext
    class BeforeAuthentication {

        @LocalServerPort
        int port;

        @Test
        void thePrincipalIsNotThereYet() throws Exception {
            HttpResponse<String> first = get(port, "alice");
            HttpResponse<String> second = get(port, "alice");

            assertThat(second.statusCode()).isEqualTo(200);
            assertThat(first.headers().firstValue("RateLimit")).isEmpty();
        }
    }

    static HttpResponse<String> get(int port, String user) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/hello"))
                                .header("X-User", user)
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    /** Authenticates whoever X-User names, at Spring Security's filter order. */
    @TestConfiguration(proxyBeanMethods = false)
    static class Authentication {

        @Bean
        FilterRegistrationBean<Filter> authentication() {
            Filter filter = (request, response, chain) -> {
                String user = ((HttpServletRequest) request).getHeader("X-User");
                chain.doFilter(
                        user == null
                                ? request
                                : new HttpServletRequestWrapper((HttpServletRequest) request) {
                                    @Override
                                    public Principal getUserPrincipal() {
                                        return () -> user;
                                    }
                                },
                        response);
            };
            FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(filter);
            registration.setOrder(-100);
            return registration;
        }
    }
}
