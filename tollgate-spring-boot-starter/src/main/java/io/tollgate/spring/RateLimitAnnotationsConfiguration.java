package io.tollgate.spring;

import io.tollgate.Policy;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.context.reactive.ReactiveWebApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/** {@link RateLimit @RateLimit} on Spring MVC and WebFlux controllers. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication
final class RateLimitAnnotationsConfiguration {

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor tollgateRateLimitAdvisor(ObjectProvider<RateLimitInterceptor> interceptor) {
        ComposablePointcut pointcut = new ComposablePointcut(
                        AnnotationMatchingPointcut.forMethodAnnotation(RateLimit.class))
                .union(AnnotationMatchingPointcut.forMethodAnnotation(RateLimits.class));
        // The interceptor is looked up on first use: its dependencies need not exist when advisors do.
        return new DefaultPointcutAdvisor(pointcut, (org.aopalliance.intercept.MethodInterceptor)
                invocation -> interceptor.getObject().invoke(invocation));
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    RateLimitInterceptor tollgateRateLimitInterceptor(RequestLimiterConfig config, RequestLimiter requests) {
        Map<String, Policy> policies = new LinkedHashMap<>();
        config.policies().forEach(policy -> policies.put(policy.name(), policy));
        return new RateLimitInterceptor(requests, policies, config.clientIps());
    }

    /**
     * Checks every controller's annotations once the beans exist, so that a bad one fails the start; in a
     * reactive application, an annotated method must return a reactive type, which is checked without
     * blocking an event loop.
     */
    @Bean
    static SmartInitializingSingleton tollgateRateLimitValidation(ApplicationContext context) {
        return () -> {
            RateLimitInterceptor interceptor = context.getBean(RateLimitInterceptor.class);
            boolean reactive = context instanceof ReactiveWebApplicationContext;
            for (String name : context.getBeanNamesForAnnotation(Controller.class)) {
                Class<?> target = ClassUtils.getUserClass(AopUtils.getTargetClass(context.getBean(name)));
                ReflectionUtils.doWithMethods(
                        target,
                        method -> {
                            interceptor.validate(method);
                            if (reactive && RateLimitInterceptor.reactiveAdapter(method) == null) {
                                throw new InvalidTollgatePropertiesException(
                                        "@RateLimit on " + target.getSimpleName() + "." + method.getName()
                                                + "() in a WebFlux application: the method returns "
                                                + method.getReturnType().getSimpleName()
                                                + ", but must return a reactive type (Mono, Flux) so that the"
                                                + " limit is checked without blocking an event loop",
                                        null);
                            }
                        },
                        method -> AnnotatedElementUtils.hasAnnotation(method, RateLimit.class)
                                || AnnotatedElementUtils.hasAnnotation(method, RateLimits.class));
            }
        };
    }
}
