package io.tollgate.spring;

import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import io.tollgate.http.ConfigSchema;
import io.tollgate.http.RequestLimiterConfig;
import io.tollgate.top.TopKeysSettings;
import java.lang.reflect.RecordComponent;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Reads {@code tollgate.*} as Tollgate's own configuration reader reads a file, so that the starter, the
 * servlet filter and the server check the same values with the same messages; a message names the Spring
 * property, such as {@code tollgate.rules[0].policy: unknown policy 'per-usr'; defined: per-user}.
 */
final class PropertiesReader {

    private PropertiesReader() {}

    /**
     * @throws InvalidTollgatePropertiesException if a value is invalid, naming its property
     */
    static RequestLimiterConfig read(TollgateProperties properties) {
        try {
            return RequestLimiterConfig.fromTree(tree(properties, ConfigSchema.RULES));
        } catch (IllegalArgumentException e) {
            throw new InvalidTollgatePropertiesException("tollgate." + e.getMessage(), e);
        }
    }

    /**
     * Reads {@code tollgate.top-keys.*} as the server reads its {@code top-keys} section.
     *
     * @throws InvalidTollgatePropertiesException if a value is invalid, naming its property
     */
    static TopKeysSettings topKeys(TollgateProperties properties) {
        return section("top-keys", tree(properties.topKeys(), TopKeysSettings.SCHEMA), TopKeysSettings::read);
    }

    private static <T> T section(String name, Map<String, Object> settings, Function<ConfigNode, T> reader) {
        try {
            return reader.apply(ConfigNode.of(Map.of(name, settings)).child(name));
        } catch (IllegalArgumentException e) {
            throw new InvalidTollgatePropertiesException("tollgate." + e.getMessage(), e);
        }
    }

    /**
     * Returns the settings of {@code bean} that {@code section} names, as a configuration file would hold them: each
     * key read from the bean's property of that name (dashes and case aside, as Spring binds them), a section's
     * values (one, a list or a map of them) in turn by its schema; unset values and empty collections left out.
     * Properties of the bean that the section does not name are the starter's own, and stay with it.
     */
    static Map<String, Object> tree(Object bean, ConfigSection section) {
        Map<String, Object> tree = new LinkedHashMap<>();
        for (String key : new TreeSet<>(section.keys())) {
            Object value = settingOf(bean, key);
            ConfigSection values = section.section(key);
            Object setting = values == null ? value : sections(value, values);
            if (setting != null
                    && !(setting instanceof Collection<?> c && c.isEmpty())
                    && !(setting instanceof Map<?, ?> m && m.isEmpty())) {
                tree.put(key, setting instanceof Enum<?> e ? e.name() : setting);
            }
        }
        return tree;
    }

    private static Object sections(Object value, ConfigSection section) {
        if (value instanceof Map<?, ?> byName) {
            Map<String, Object> sections = new LinkedHashMap<>();
            byName.forEach((name, each) -> sections.put(String.valueOf(name), tree(each, section)));
            return sections;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(each -> tree(each, section)).toList();
        }
        return value == null ? null : tree(value, section);
    }

    /** Returns the value of {@code bean}'s property (a record's component) that {@code key} names. */
    static Object settingOf(Object bean, String key) {
        String property = key.replace("-", "");
        for (RecordComponent component : bean.getClass().getRecordComponents()) {
            if (component.getName().equalsIgnoreCase(property)) {
                try {
                    return component.getAccessor().invoke(bean);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(
                            "cannot read " + key + " of " + bean.getClass().getName(), e);
                }
            }
        }
        throw new IllegalStateException(bean.getClass().getName() + " has no property for the setting " + key);
    }
}
