package io.tollgate.spring;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.tollgate.redis.RedisRateLimiter;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The application's own Redis (spring.data.redis.*): shared through its Lettuce connection factory when it has
 * one, else reached by a Lettuce client of Tollgate's own made from the same settings (an application on Jedis,
 * Boot's other client), so that the limits are shared by every instance either way.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedisConnectionFactory.class, DataRedisConnectionDetails.class})
final class ApplicationRedisConfiguration {

    /**
     * The Lettuce client behind the application's own Redis connection factory, which the limiter shares, and
     * where it connects, as {@code spring.data.redis.*} says.
     */
    record ApplicationRedisClient(Supplier<AbstractRedisClient> client, Supplier<String> description) {}

    /**
     * Where the application's Redis is, for a client of the limiter's own: what to set on its builder, and where
     * it connects. For an application whose connection factory is not Lettuce's.
     */
    record ApplicationRedisSettings(Consumer<RedisRateLimiter.Builder> connection, String description) {}

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

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnBean(DataRedisConnectionDetails.class)
    @ConditionalOnMissingBean(LettuceConnectionFactory.class)
    ApplicationRedisSettings tollgateApplicationRedisSettings(
            DataRedisConnectionDetails details,
            ObjectProvider<DataRedisProperties> properties,
            ObjectProvider<RedisConnectionFactory> factory) {
        DataRedisProperties set = properties.getIfAvailable();
        boolean tls = details.getSslBundle() != null
                || (set != null
                        && (set.getSsl().isEnabled()
                                || (set.getUrl() != null && set.getUrl().startsWith("rediss:"))));
        SslOptions ssl = sslOptions(details.getSslBundle());
        String client = factory.getIfAvailable() == null
                ? "no connection factory"
                : "its connection factory is "
                        + factory.getIfAvailable().getClass().getSimpleName();
        String own =
                " (TLS: " + (tls ? "yes" : "no") + "), through a Lettuce client of Tollgate's own (" + client + ")";
        if (details.getCluster() != null) {
            List<RedisURI> seeds = details.getCluster().getNodes().stream()
                    .map(node -> authenticated(
                                    RedisURI.builder().withHost(node.host()).withPort(node.port()), details)
                            .withSsl(tls)
                            .build())
                    .toList();
            return new ApplicationRedisSettings(
                    builder -> withSsl(builder.clusterRedisUris(seeds), ssl),
                    "the application's Redis Cluster via "
                            + nodes(details.getCluster().getNodes()) + own);
        }
        if (details.getSentinel() != null) {
            DataRedisConnectionDetails.Sentinel sentinel = details.getSentinel();
            RedisURI.Builder uri = RedisURI.builder()
                    .withSentinelMasterId(sentinel.getMaster())
                    .withDatabase(sentinel.getDatabase())
                    .withSsl(tls);
            for (DataRedisConnectionDetails.Node node : sentinel.getNodes()) {
                RedisURI.Builder each = RedisURI.builder().withHost(node.host()).withPort(node.port());
                if (sentinel.getPassword() != null) {
                    each = sentinel.getUsername() == null
                            ? each.withPassword(sentinel.getPassword().toCharArray())
                            : each.withAuthentication(sentinel.getUsername(), sentinel.getPassword());
                }
                uri.withSentinel(each.build());
            }
            RedisURI built = authenticated(uri, details).build();
            return new ApplicationRedisSettings(
                    builder -> withSsl(builder.uri(built), ssl),
                    "the application's Redis Sentinel master '" + sentinel.getMaster() + "' via "
                            + nodes(sentinel.getNodes()) + own);
        }
        if (details.getMasterReplica() != null) {
            throw new InvalidTollgatePropertiesException(
                    "the application's Redis is a static master and replicas (spring.data.redis.masterreplica), on a"
                            + " connection factory Tollgate cannot share: point Tollgate at the master with"
                            + " tollgate.redis.uri, or give the application a Lettuce connection factory",
                    null);
        }
        DataRedisConnectionDetails.Standalone standalone = details.getStandalone();
        RedisURI built = authenticated(
                        RedisURI.builder()
                                .withHost(standalone.getHost())
                                .withPort(standalone.getPort())
                                .withDatabase(standalone.getDatabase())
                                .withSsl(tls),
                        details)
                .build();
        return new ApplicationRedisSettings(
                builder -> withSsl(builder.uri(built), ssl),
                "the application's Redis at " + standalone.getHost() + ":" + standalone.getPort() + own);
    }

    private static RedisURI.Builder authenticated(RedisURI.Builder uri, DataRedisConnectionDetails details) {
        if (details.getPassword() == null) {
            return uri;
        }
        return details.getUsername() == null
                ? uri.withPassword(details.getPassword().toCharArray())
                : uri.withAuthentication(details.getUsername(), details.getPassword());
    }

    /** The TLS options of an application's SSL bundle: its trust and key material, protocols and ciphers. */
    private static SslOptions sslOptions(SslBundle bundle) {
        if (bundle == null) {
            return null;
        }
        SslOptions.Builder options = SslOptions.builder()
                .jdkSslProvider()
                .keyManager(bundle.getManagers().getKeyManagerFactory())
                .trustManager(bundle.getManagers().getTrustManagerFactory());
        if (bundle.getOptions().getEnabledProtocols() != null) {
            options.protocols(bundle.getOptions().getEnabledProtocols());
        }
        if (bundle.getOptions().getCiphers() != null) {
            options.cipherSuites(bundle.getOptions().getCiphers());
        }
        return options.build();
    }

    private static void withSsl(RedisRateLimiter.Builder builder, SslOptions ssl) {
        if (ssl != null) {
            builder.sslOptions(ssl);
        }
    }

    /** Says where the application's Redis is: a server, a Sentinel master or a Cluster, and TLS. */
    private static String describe(LettuceConnectionFactory factory) {
        String tls = factory.isUseSsl() ? " (TLS)" : " (no TLS)";
        if (factory.getClusterConfiguration() != null) {
            return "the application's Redis Cluster via "
                    + nodes(factory.getClusterConfiguration().getClusterNodes().stream()
                            .map(node -> new DataRedisConnectionDetails.Node(node.getHost(), node.getPort()))
                            .toList())
                    + tls;
        }
        if (factory.getSentinelConfiguration() != null) {
            var sentinel = factory.getSentinelConfiguration();
            return "the application's Redis Sentinel master '"
                    + (sentinel.getMaster() == null ? "?" : sentinel.getMaster().getName()) + "' via "
                    + nodes(sentinel.getSentinels().stream()
                            .map(node -> new DataRedisConnectionDetails.Node(node.getHost(), node.getPort()))
                            .toList())
                    + tls;
        }
        return "the application's Redis at " + factory.getHostName() + ":" + factory.getPort() + tls;
    }

    private static String nodes(List<DataRedisConnectionDetails.Node> nodes) {
        return String.join(
                ", ",
                nodes.stream().map(node -> node.host() + ":" + node.port()).toList());
    }
}
