package io.tollgate.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One value of a configuration tree (maps, lists and scalars, as YAML parsers and the properties reader
 * below produce them), with its path from the root, so that every error names where the bad value is:
 * {@code rules[1].cost: must be a whole number, was 'ten'}. When the tree came from a file whose lines are
 * known, errors carry the line of the value, or of the nearest enclosing value for a missing setting.
 */
final class ConfigNode {

    private final String path;
    private final Object value;
    private final Map<String, Integer> lines;

    private ConfigNode(String path, Object value, Map<String, Integer> lines) {
        this.path = path;
        this.value = value;
        this.lines = lines;
    }

    /** Returns the root of a tree whose lines are unknown. */
    static ConfigNode root(Object value) {
        return new ConfigNode("", value, Map.of());
    }

    /** Returns the root of a tree, with the 1-based line of each path in it. */
    static ConfigNode root(Object value, Map<String, Integer> lines) {
        return new ConfigNode("", value, lines);
    }

    String path() {
        return path;
    }

    boolean isPresent() {
        return value != null;
    }

    /** Returns the entries of a map, in order, after checking that every key is one of {@code allowed}. */
    Map<String, ConfigNode> entries(Set<String> allowed) {
        Map<String, ConfigNode> entries = entries();
        for (String key : entries.keySet()) {
            if (!allowed.contains(key)) {
                throw error("unknown setting '" + key + "'; known: " + String.join(", ", new TreeSet<>(allowed)));
            }
        }
        return entries;
    }

    /** Returns the entries of a map, in order. */
    Map<String, ConfigNode> entries() {
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map<?, ?> map)) {
            throw error("must be a map of settings, was " + describe());
        }
        Map<String, ConfigNode> entries = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            String key = String.valueOf(entry.getKey());
            entries.put(key, new ConfigNode(child(key), entry.getValue(), lines));
        }
        return entries;
    }

    ConfigNode get(Map<String, ConfigNode> entries, String key) {
        return entries.getOrDefault(key, new ConfigNode(child(key), null, lines));
    }

    /** Returns the elements of a list; a single value counts as a list of one. */
    List<ConfigNode> elements() {
        if (value == null) {
            return List.of();
        }
        List<?> list = value instanceof List<?> l ? l : List.of(value);
        List<ConfigNode> elements = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            elements.add(new ConfigNode(path + "[" + i + "]", list.get(i), lines));
        }
        return elements;
    }

    /** Returns a list of strings, written as a list or as one comma-separated string. */
    List<String> strings() {
        if (value instanceof String text) {
            List<String> strings = new ArrayList<>();
            for (String part : text.split(",")) {
                if (!part.isBlank()) {
                    strings.add(part.strip());
                }
            }
            return strings;
        }
        List<String> strings = new ArrayList<>();
        for (ConfigNode element : elements()) {
            strings.add(element.string(null));
        }
        return strings;
    }

    String string(String defaultValue) {
        if (value == null) {
            return defaultValue;
        }
        if (value instanceof Map || value instanceof List) {
            throw error("must be a single value, was " + describe());
        }
        return String.valueOf(value).strip();
    }

    String requiredString() {
        String text = string(null);
        if (text == null || text.isEmpty()) {
            throw error("is required");
        }
        return text;
    }

    long longValue(long defaultValue) {
        if (value == null) {
            return defaultValue;
        }
        if (value instanceof Integer || value instanceof Long) {
            return ((Number) value).longValue();
        }
        String text = string(null);
        try {
            return Long.parseLong(text.replace("_", ""));
        } catch (NumberFormatException e) {
            throw error("must be a whole number, was '" + text + "'");
        }
    }

    long requiredLong() {
        if (value == null) {
            throw error("is required");
        }
        return longValue(0);
    }

    boolean bool(boolean defaultValue) {
        if (value == null) {
            return defaultValue;
        }
        if (value instanceof Boolean b) {
            return b;
        }
        String text = string(null).toLowerCase(Locale.ROOT);
        if (text.equals("true") || text.equals("false")) {
            return Boolean.parseBoolean(text);
        }
        throw error("must be true or false, was '" + text + "'");
    }

    /** Returns an error that names this node's path, and its line when known. */
    ConfigError error(String problem) {
        return new ConfigError(line(), (path.isEmpty() ? "configuration" : path) + ": " + problem);
    }

    /**
     * Returns {@code cause} if it is already a configuration error, else its message prefixed with this
     * node's path.
     */
    ConfigError error(IllegalArgumentException cause) {
        if (cause instanceof ConfigError error) {
            return error;
        }
        ConfigError error = error(cause.getMessage());
        error.initCause(cause);
        return error;
    }

    /** Returns the line of this node, or of its nearest ancestor that has one; 0 if none does. */
    private int line() {
        String at = path;
        while (true) {
            Integer line = lines.get(at);
            if (line != null) {
                return line;
            }
            if (at.isEmpty()) {
                return 0;
            }
            int cut = Math.max(at.lastIndexOf('.'), at.lastIndexOf('['));
            at = cut < 0 ? "" : at.substring(0, cut);
        }
    }

    private String child(String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    private String describe() {
        if (value instanceof Map) {
            return "a map";
        }
        if (value instanceof List) {
            return "a list";
        }
        return "'" + value + "'";
    }

    /**
     * Turns flat properties into the tree a YAML file would give: {@code a.b=1} into {@code {a: {b: 1}}},
     * {@code a[0].b=1} into {@code {a: [{b: 1}]}}. Under each key of {@code namedMaps} (such as {@code
     * policies}) comes a name that may itself contain dots, followed by the one setting that the map's
     * value holds (such as {@code limits}): {@code policies.api.v2.limits[0].capacity} is the capacity of
     * the first limit of policy {@code api.v2}.
     *
     * @throws IllegalArgumentException if a key cannot be placed, or a list has a gap, naming the key
     */
    static Map<String, Object> fromProperties(Properties properties, Map<String, String> namedMaps) {
        Map<Object, Object> root = new TreeMap<>();
        for (String key : new TreeSet<>(properties.stringPropertyNames())) {
            List<Object> segments = segments(key, namedMaps);
            if (segments.isEmpty() || !(segments.get(0) instanceof String)) {
                throw new IllegalArgumentException("property '" + key + "' must start with a setting name");
            }
            put(root, segments, 0, properties.getProperty(key), key);
        }
        return toLists(root, "");
    }

    private static List<Object> segments(String key, Map<String, String> namedMaps) {
        List<Object> segments = new ArrayList<>();
        String rest = key.strip();
        for (Map.Entry<String, String> named : namedMaps.entrySet()) {
            if (rest.startsWith(named.getKey() + ".")) {
                segments.add(named.getKey());
                rest = rest.substring(named.getKey().length() + 1);
                int end = nameEnd(rest, "." + named.getValue());
                segments.add(rest.substring(0, end));
                rest = rest.substring(end);
                if (rest.startsWith(".")) {
                    rest = rest.substring(1);
                }
                break;
            }
        }
        int i = 0;
        while (i < rest.length()) {
            char c = rest.charAt(i);
            if (c == '[') {
                int close = rest.indexOf(']', i);
                if (close < 0) {
                    throw new IllegalArgumentException("property '" + key + "': '[' without ']'");
                }
                try {
                    segments.add(Integer.valueOf(rest.substring(i + 1, close)));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("property '" + key + "': a list index must be a number");
                }
                i = close + 1;
                if (i < rest.length() && rest.charAt(i) == '.') {
                    i++;
                }
                continue;
            }
            int end = i;
            while (end < rest.length() && rest.charAt(end) != '.' && rest.charAt(end) != '[') {
                end++;
            }
            segments.add(rest.substring(i, end));
            i = end < rest.length() && rest.charAt(end) == '.' ? end + 1 : end;
        }
        return segments;
    }

    /**
     * Returns where the name ends in {@code rest}: before the last {@code .CHILD} that is followed by
     * {@code [}, {@code .} or the end; the whole of rest if there is none.
     */
    private static int nameEnd(String rest, String child) {
        for (int at = rest.lastIndexOf(child); at > 0; at = rest.lastIndexOf(child, at - 1)) {
            int after = at + child.length();
            if (after == rest.length() || rest.charAt(after) == '[' || rest.charAt(after) == '.') {
                return at;
            }
        }
        return rest.length();
    }

    @SuppressWarnings("unchecked")
    private static void put(Map<Object, Object> node, List<Object> segments, int index, String value, String key) {
        Object segment = segments.get(index);
        if (index == segments.size() - 1) {
            if (node.containsKey(segment)) {
                throw new IllegalArgumentException("property '" + key + "' conflicts with another property");
            }
            node.put(segment, value);
            return;
        }
        Object child = node.computeIfAbsent(segment, s -> new TreeMap<>());
        if (!(child instanceof Map)) {
            throw new IllegalArgumentException("property '" + key + "' conflicts with another property");
        }
        Map<Object, Object> childMap = (Map<Object, Object>) child;
        if (!childMap.isEmpty()
                && (childMap.keySet().iterator().next() instanceof Integer)
                        != (segments.get(index + 1) instanceof Integer)) {
            throw new IllegalArgumentException("property '" + key + "' mixes a list and a map of settings");
        }
        put(childMap, segments, index + 1, value, key);
    }

    @SuppressWarnings("unchecked")
    private static <T> T toLists(Map<?, ?> node, String path) {
        boolean isList = !node.isEmpty() && node.keySet().iterator().next() instanceof Integer;
        if (isList) {
            List<Object> list = new ArrayList<>();
            for (Map.Entry<?, ?> entry : node.entrySet()) {
                int index = (Integer) entry.getKey();
                if (index != list.size()) {
                    throw new IllegalArgumentException(
                            "property " + path + "[" + list.size() + "] is missing before " + path + "[" + index + "]");
                }
                list.add(convert(entry.getValue(), path + "[" + index + "]"));
            }
            return (T) list;
        }
        Map<String, Object> map = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : node.entrySet()) {
            String key = (String) entry.getKey();
            map.put(key, convert(entry.getValue(), path.isEmpty() ? key : path + "." + key));
        }
        return (T) map;
    }

    private static Object convert(Object value, String path) {
        return value instanceof Map<?, ?> map ? toLists(map, path) : value;
    }
}
