package io.tollgate.spring;

import java.lang.reflect.Field;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.springframework.boot.context.properties.bind.Name;
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

    /** The settings of a properties record, by their kebab-case names (or the name it gives), with their types. */
    private static Map<String, Type> settings(Class<?> bean) {
        Map<String, Type> settings = new TreeMap<>();
        if (bean.isRecord()) {
            for (RecordComponent component : bean.getRecordComponents()) {
                Name named = field(bean, component.getName()).getAnnotation(Name.class);
                settings.put(named != null ? named.value() : kebab(component.getName()), component.getGenericType());
            }
        }
        return settings;
    }

    private static Field field(Class<?> bean, String name) {
        try {
            return bean.getDeclaredField(name);
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException("a record without the field of its component " + name, e);
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
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
