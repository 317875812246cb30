package io.tollgate.spring;

import io.lettuce.core.AbstractRedisClient;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** The application's own Redis (spring.data.redis.*), when it is on Lettuce. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(LettuceConnectionFactory.class)
final class ApplicationRedisConfiguration {

    /**
     * The Lettuce client behind the application's own Redis connection factory, which the limiter shares, and
     * where it connects, as {@code spring.data.redis.*} says.
     */
    record ApplicationRedisClient(Supplier<AbstractRedisClient> client, Supplier<String> description) {}

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ApplicationRedisClient tollgateApplicationRedisClient(ObjectProvider<LettuceConnectionFactory> connections) {
        return new ApplicationRedisClient(
                () -> {
                    LettuceConnectionFactory factory = connections.getObject();
                    if (!factory.isRunning()) {
                        factory.start(); // its client exists once started; starting twice does nothing
                    }
                    return factory.getNativeClient();
                },
                () -> describe(connections.getObject()));
    }

    /** Says where the application's Redis is: a server, a Sentinel master or a Cluster, and TLS. */
    private static String describe(LettuceConnectionFactory factory) {
        String tls = factory.isUseSsl() ? " (TLS)" : " (no TLS)";
        if (factory.getClusterConfiguration() != null) {
            return "the application's Redis Cluster via "
                    + nodes(factory.getClusterConfiguration().getClusterNodes()) + tls;
        }
        if (factory.getSentinelConfiguration() != null) {
            var sentinel = factory.getSentinelConfiguration();
            return "the application's Redis Sentinel master '"
                    + (sentinel.getMaster() == null ? "?" : sentinel.getMaster().getName()) + "' via "
                    + nodes(sentinel.getSentinels()) + tls;
        }
        return "the application's Redis at " + factory.getHostName() + ":" + factory.getPort() + tls;
    }

    private static String nodes(
            java.util.Collection<? extends org.springframework.data.redis.connection.RedisNode> nodes) {
        return String.join(
                ", ",
                nodes.stream()
                        .map(node -> node.getHost() + ":" + node.getPort())
                        .toList());
    }
}
