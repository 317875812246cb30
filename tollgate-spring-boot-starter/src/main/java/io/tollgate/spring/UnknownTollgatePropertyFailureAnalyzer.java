package io.tollgate.spring;

import java.beans.IntrospectionException;
import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.Collection;
import java.util.Map;
import java.util.TreeSet;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

/**
 * Reports a misspelt {@code tollgate.*} property as the rules files and the server report an unknown
 * setting: its name, and the settings known where it stands, such as {@code tollgate.polices: unknown
 * setting 'polices'; known: client-ip, enabled, ...}. {@link TollgateProperties} refuses unknown fields, so
 * that a typo stops the start instead of passing unnoticed. Ordered before Spring Boot's own analyzers.
 */
final class UnknownTollgatePropertyFailureAnalyzer
        extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException> implements Ordered {

    private static final String PREFIX = "tollgate";

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
        for (ConfigurationProperty property : new TreeSet<>(cause.getUnboundProperties())) {
            String name = property.getName().toString();
            if (name.startsWith(PREFIX + ".")) {
                return new FailureAnalysis(
                        "Tollgate cannot start: " + describe(name)
                                + (property.getOrigin() == null ? "" : " (from " + property.getOrigin() + ")"),
                        "Correct the name of the tollgate.* property above; docs/spring-boot.md lists them all.",
                        cause);
            }
        }
        return null;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    /**
     * Names the first part of {@code name} that {@link TollgateProperties} does not know, and what it knows
     * there: {@code tollgate.redis: unknown setting 'timout'; known: batching, cluster-uris, ...}.
     */
    static String describe(String name) {
        String[] parts = name.substring(PREFIX.length() + 1).split("\\.");
        Type type = TollgateProperties.class;
        StringBuilder at = new StringBuilder(PREFIX);
        for (String part : parts) {
            String setting = part.replaceAll("\\[\\d+]$", "");
            Class<?> bean = raw(type);
            if (Map.class.isAssignableFrom(bean)) {
                type = argument(type, 1); // the part is a key of the map, such as a policy's name
                at.append('.').append(part);
                continue;
            }
            Map<String, Type> known = settings(bean);
            if (!known.containsKey(setting)) {
                return at + ": unknown setting '" + setting + "'; known: " + String.join(", ", known.keySet());
            }
            type = known.get(setting);
            if (Collection.class.isAssignableFrom(raw(type)) && !setting.equals(part)) {
                type = argument(type, 0); // an element of the list, such as rules[0]
            }
            at.append('.').append(part);
        }
        return name + ": unknown setting";
    }

    /** The settings of a properties bean, by their kebab-case names, with their types, sorted. */
    private static Map<String, Type> settings(Class<?> bean) {
        Map<String, Type> settings = new java.util.TreeMap<>();
        try {
            for (PropertyDescriptor property :
                    Introspector.getBeanInfo(bean, Object.class).getPropertyDescriptors()) {
                Method getter = property.getReadMethod();
                if (getter != null && property.getWriteMethod() != null) {
                    settings.put(kebab(property.getName()), getter.getGenericReturnType());
                }
            }
        } catch (IntrospectionException e) {
            throw new IllegalStateException("cannot read the properties of " + bean, e);
        }
        return settings;
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }

    private static Class<?> raw(Type type) {
        return type instanceof ParameterizedType parameterized
                ? (Class<?>) parameterized.getRawType()
                : type instanceof Class<?> plain ? plain : Object.class;
    }

    private static Type argument(Type type, int index) {
        return type instanceof ParameterizedType parameterized
                ? parameterized.getActualTypeArguments()[index]
                : Object.class;
    }
}
