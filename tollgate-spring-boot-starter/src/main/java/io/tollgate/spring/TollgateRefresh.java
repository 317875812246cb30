package io.tollgate.spring;

import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.http.OverloadProtection;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.core.env.Environment;

/**
 * Applies a changed {@code tollgate.*} environment to the running application: binds and checks it in full,
 * and if it is valid, and every {@code @RateLimit} reads well against it, swaps the policies, rules, client
 * IPs and responses of the filter, the annotations and the Actuator endpoint at once. The buckets stay in the
 * limiter, by policy name and key, so clients keep what they spent; the store ({@code tollgate.redis.*},
 * {@code memory}) and the filter's registration change only at the next start. A bad environment changes
 * nothing and is logged. Called on Spring Cloud's {@code EnvironmentChangeEvent}. Thread-safe.
 */
final class TollgateRefresh {

    private static final System.Logger LOG = System.getLogger(TollgateRefresh.class.getName());

    private final Environment environment;
    private final RateLimiter limiter;
    private final LiveRules rules;
    private final ObjectProvider<TollgateRequestLimiterCustomizer> customizers;
    private final ObjectProvider<RateLimitInterceptor> interceptor;

    TollgateRefresh(
            Environment environment,
            RateLimiter limiter,
            LiveRules rules,
            ObjectProvider<TollgateRequestLimiterCustomizer> customizers,
            ObjectProvider<RateLimitInterceptor> interceptor) {
        this.environment = environment;
        this.limiter = limiter;
        this.rules = rules;
        this.customizers = customizers;
        this.interceptor = interceptor;
    }

    /**
     * Reads {@code tollgate.*} again and applies it if it is valid.
     *
     * @return whether the new configuration runs now
     */
    synchronized boolean apply() {
        RequestLimiterConfig config;
        try {
            TollgateProperties properties = Binder.get(environment)
                    .bindOrCreate(
                            "tollgate",
                            Bindable.of(TollgateProperties.class),
                            new NoUnboundElementsBindHandler(BindHandler.DEFAULT));
            config = PropertiesReader.read(properties);
        } catch (BindException | InvalidTollgatePropertiesException e) {
            LOG.log(
                    Level.WARNING,
                    "Tollgate: the changed tollgate.* is not applied, the running one stays: {0}",
                    describe(e));
            return false;
        }
        RequestLimiter.Builder builder = config.toBuilder(limiter);
        OverloadProtection running = rules.requests().overload();
        if (running != null
                && config.overload() != null
                && running.settings().equals(config.overload().settings())) {
            builder.overload(running); // what it learnt, and the requests in flight under it, carry over
        }
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        RequestLimiter requests = builder.build();
        Map<String, Policy> policies = new LinkedHashMap<>();
        config.policies().forEach(policy -> policies.put(policy.name(), policy));
        RateLimitInterceptor annotations = interceptor.getIfAvailable();
        if (annotations != null) {
            try {
                annotations.replace(requests, policies, config.clientIps());
            } catch (InvalidTollgatePropertiesException e) {
                LOG.log(
                        Level.WARNING,
                        "Tollgate: the changed tollgate.* is not applied, the running one stays: {0}",
                        e.getMessage());
                return false;
            }
        }
        rules.replace(new LiveRules.Rules(config, requests)); // and the filter, told by the rules

        LOG.log(
                Level.INFO,
                "Tollgate: applied the changed tollgate.*: {0} policies, {1} rules",
                config.policies().size(),
                config.rules().size());
        return true;
    }

    private static String describe(Exception e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String message = String.valueOf(e.getMessage());
        return e == cause || message.contains(String.valueOf(cause.getMessage()))
                ? message
                : message + ": " + cause.getMessage();
    }
}
