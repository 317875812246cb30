package io.tollgate.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;

/** Turns a properties file into the tree of maps and lists that the same settings in YAML would give. */
final class PropertiesTree {

    private PropertiesTree() {}

    /**
     * Turns flat properties into the tree a YAML file would give: {@code a.b=1} into {@code {a: {b: 1}}},
     * {@code a[0].b=1} into {@code {a: [{b: 1}]}}. Under each key of {@code namedMaps} (such as {@code
     * policies}) comes a name that may itself contain dots, followed by one of the settings that the map's
     * value lists, separated by commas (such as {@code limits,quotas}): {@code policies.api.v2.limits[0].capacity}
     * is the capacity of the first limit of policy {@code api.v2}.
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
                int end = rest.length();
                for (String child : named.getValue().split(",")) {
                    end = Math.min(end, nameEnd(rest, "." + child));
                }
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
