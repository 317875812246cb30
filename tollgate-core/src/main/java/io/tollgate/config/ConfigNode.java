package io.tollgate.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One value of a configuration file (a map of settings, a list or a scalar), with its path from the root
 * and, for a YAML file, its line, so that every error says where the bad value is: {@code limits.yaml:14:
 * rules[1].cost: must be a whole number, was 'ten'}. For programs that read files with Tollgate's sections
 * in them, such as the Tollgate server; tollgate-http reads YAML into it, and reads the sections it shares
 * (policies, rules), and tollgate-redis the {@code redis} section.
 *
 * <p>Reading a value checks it: each accessor throws a {@link ConfigException} that names the path, and
 * the line when it is known (of the value, or of the nearest enclosing value for a missing setting).
 * Scalars are read from their text, so {@code yes} is not a boolean and {@code 010} is ten. Immutable.
 */
public final class ConfigNode {

    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(us|ms|s|m|h|d)");

    private final String path;
    private final Object value;
    private final Map<String, Integer> lines;

    private ConfigNode(String path, Object value, Map<String, Integer> lines) {
        this.path = path;
        this.value = value;
        this.lines = lines;
    }

    /**
     * Returns the root of a tree that another parser made: maps with string keys, lists, and scalars
     * (strings, numbers, booleans). Its lines are unknown.
     */
    public static ConfigNode of(Map<String, ?> tree) {
        return of(tree, Map.of());
    }

    /**
     * Returns the root of a tree that a parser made (maps with string keys, lists, and scalars), with the 1-based
     * line of each path in it, such as {@code rules[1].cost}, as far as the parser knows them.
     */
    public static ConfigNode of(Map<String, ?> tree, Map<String, Integer> lines) {
        return new ConfigNode("", Objects.requireNonNull(tree, "tree"), Map.copyOf(lines));
    }

    /** Returns the path of this value from the root, such as {@code rules[1].cost}; empty for the root. */
    public String path() {
        return path;
    }

    /** Returns whether the value is there: a setting that a file leaves out, or sets to null, is not. */
    public boolean isPresent() {
        return value != null;
    }

    /**
     * Checks that this map has no settings but the keys of {@code section}.
     *
     * @throws ConfigException if this is not a map, or has another setting, naming it and the known ones, at
     *     the line of the unknown one
     */
    public void checkKeys(ConfigSection section) {
        checkKeys(section.keys(), Map.of());
    }

    /**
     * Checks that this map has no settings but {@code allowed}.
     *
     * @throws ConfigException if this is not a map, or has another setting, naming it and the known ones, at
     *     the line of the unknown one
     */
    public void checkKeys(Set<String> allowed) {
        checkKeys(allowed, Map.of());
    }

    /**
     * Checks that this map has no other settings than {@code allowed}; a setting that {@code renamed} names
     * (an old name, and where it went) is an error that says where it went. Renames have no aliases.
     *
     * @throws ConfigException naming the first unknown setting, and the known ones
     */
    public void checkKeys(Set<String> allowed, Map<String, String> renamed) {
        for (String key : entries().keySet()) {
            if (!allowed.contains(key)) {
                String now = renamed.get(key);
                throw new ConfigException(
                        child(key).line(),
                        (path.isEmpty() ? "configuration" : path) + ": unknown setting '" + key + "'"
                                + (now == null ? "" : " (it is " + now + " now)") + "; known: "
                                + String.join(", ", new TreeSet<>(allowed)));
            }
        }
    }

    /**
     * Returns the setting {@code key} of this map; one that is absent is a value that is not {@linkplain
     * #isPresent() present}, and absent values have absent children.
     *
     * @throws ConfigException if this is present and not a map
     */
    public ConfigNode child(String key) {
        Object child = value == null ? null : asMap().get(key);
        return new ConfigNode(path.isEmpty() ? key : path + "." + key, child, lines);
    }

    /**
     * Returns the settings of this map in file order, such as the named policies of {@code policies}; none
     * if it is absent.
     *
     * @throws ConfigException if this is present and not a map
     */
    public Map<String, ConfigNode> entries() {
        Map<String, ConfigNode> entries = new LinkedHashMap<>();
        if (value != null) {
            for (Object key : asMap().keySet()) {
                entries.put(String.valueOf(key), child(String.valueOf(key)));
            }
        }
        return entries;
    }

    /** Returns the elements of a list; a single value counts as a list of one, an absent one as none. */
    public List<ConfigNode> elements() {
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

    /**
     * Returns a list of strings, written as a list or as one comma-separated string; empty if absent.
     *
     * @throws ConfigException if an element is not a single value
     */
    public List<String> strings() {
        List<String> strings = new ArrayList<>();
        if (value instanceof String text) {
            for (String part : text.split(",")) {
                if (!part.isBlank()) {
                    strings.add(part.strip());
                }
            }
            return strings;
        }
        for (ConfigNode element : elements()) {
            strings.add(element.string(null));
        }
        return strings;
    }

    /**
     * Returns the value as text, trimmed, or {@code defaultValue} if it is absent.
     *
     * @throws ConfigException if the value is a map or a list
     */
    public String string(String defaultValue) {
        if (value == null) {
            return defaultValue;
        }
        if (value instanceof Map || value instanceof List) {
            throw error("must be a single value, was " + describe());
        }
        return String.valueOf(value).strip();
    }

    /**
     * Returns the value as text, trimmed.
     *
     * @throws ConfigException if it is absent or empty, or a map or a list
     */
    public String requiredString() {
        String text = string(null);
        if (text == null || text.isEmpty()) {
            throw error("is required");
        }
        return text;
    }

    /**
     * Returns a secret, such as a password or a token, or {@code defaultValue} if absent: the value's text, or,
     * where the value is {@code {env: NAME}} or {@code {file: PATH}}, the environment variable {@code NAME} or the
     * contents of the file at {@code PATH} (as Kubernetes mounts a secret), read now, surrounding whitespace
     * trimmed (a file written by {@code echo} ends with a line break). No error, and no message of this node's,
     * holds the secret: each names the setting, the variable or the file.
     *
     * @throws ConfigException if the value is a list, a map of anything else, an unset or empty variable, or a
     *     file that cannot be read or is empty
     */
    public String secret(String defaultValue) {
        if (value == null) {
            return defaultValue;
        }
        if (value instanceof List) {
            throw error("must be the secret, {env: NAME} or {file: PATH}, was a list");
        }
        if (!(value instanceof Map<?, ?> source)) {
            String text = String.valueOf(value).strip();
            if (text.isEmpty()) {
                throw error("is required");
            }
            return text;
        }
        if (source.size() != 1 || !(source.containsKey("env") || source.containsKey("file"))) {
            throw error("must be the secret, {env: NAME} or {file: PATH}, was a map of "
                    + new TreeSet<>(
                            source.keySet().stream().map(String::valueOf).toList()));
        }
        return SecretSources.read(child("env"), child("file"));
    }

    /**
     * Returns the value as a whole number ({@code _} may group digits), or {@code defaultValue} if absent.
     *
     * @throws ConfigException if it is not a whole number
     */
    public long longValue(long defaultValue) {
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

    /**
     * Returns the value as a whole number.
     *
     * @throws ConfigException if it is absent or not a whole number
     */
    public long requiredLong() {
        if (value == null) {
            throw error("is required");
        }
        return longValue(0);
    }

    /**
     * Returns the value as {@code true} or {@code false} (any case), or {@code defaultValue} if absent.
     *
     * @throws ConfigException if it is anything else
     */
    public boolean bool(boolean defaultValue) {
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

    /**
     * Returns the value as a positive duration written as a whole number and a unit, {@code us}, {@code
     * ms}, {@code s}, {@code m}, {@code h} or {@code d} (such as {@code 50ms} or {@code 30s}), or {@code
     * defaultValue} if absent.
     *
     * @throws ConfigException if it is not such a duration, or is zero
     */
    public Duration duration(Duration defaultValue) {
        return duration(defaultValue, false);
    }

    /**
     * Returns the value as a duration of zero or more, written as {@link #duration} reads it ({@code 0s} is
     * zero), or {@code defaultValue} if absent.
     *
     * @throws ConfigException if it is not such a duration
     */
    public Duration durationFromZero(Duration defaultValue) {
        return duration(defaultValue, true);
    }

    private Duration duration(Duration defaultValue, boolean zero) {
        if (value == null) {
            return defaultValue;
        }
        if (value instanceof Duration given) { // as a framework bound it, such as Spring Boot
            if ((given.isZero() && !zero) || given.isNegative()) {
                throw error(zero ? "must not be negative, was " + given : "must be longer than zero, was " + given);
            }
            return given;
        }
        String text = string(null);
        Matcher matcher = DURATION.matcher(text.toLowerCase(Locale.ROOT));
        if (!matcher.matches()) {
            throw error("must be a duration such as 50ms, 30s or 5m, was '" + text + "'");
        }
        long amount;
        try {
            amount = Long.parseLong(matcher.group(1));
        } catch (NumberFormatException e) {
            throw error("duration '" + text + "' is too long");
        }
        if (amount == 0 && !zero) {
            throw error("must be longer than zero, was '" + text + "'");
        }
        return switch (matcher.group(2)) {
            case "us" -> Duration.ofNanos(Math.multiplyExact(amount, 1_000L));
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofDays(amount);
        };
    }

    /** Returns an error that names this value's path, and its line when known. */
    public ConfigException error(String problem) {
        return new ConfigException(line(), (path.isEmpty() ? "configuration" : path) + ": " + problem);
    }

    /**
     * Returns {@code cause} if it is already a configuration error, else an error with its message that
     * names this value's path and line, caused by it.
     */
    public ConfigException error(IllegalArgumentException cause) {
        if (cause instanceof ConfigException error) {
            return error;
        }
        ConfigException error = error(cause.getMessage());
        error.initCause(cause);
        return error;
    }

    /** Returns the line of this value, or of its nearest enclosing value that has one; 0 if none does. */
    public int line() {
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

    private Map<?, ?> asMap() {
        if (!(value instanceof Map<?, ?> map)) {
            throw error("must be a map of settings, was " + describe());
        }
        return map;
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
}
