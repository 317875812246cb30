package io.tollgate.server;

import io.tollgate.config.ConfigNode;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the server section's bounds at its edge, where a client's connection first meets it: the names its loopback
 * ports answer ({@code allowed-hosts}), how many connections it holds ({@code max-connections}) and the largest
 * body the proxy forwards ({@code max-body-size}). Stateless.
 */
final class EdgeSettings {

    private EdgeSettings() {}

    /**
     * Reads {@code server.allowed-hosts}: the names besides {@code localhost} that a request to a port bound to this
     * host only may give in {@code Host}, such as an alias of 127.0.0.1 in {@code /etc/hosts}.
     */
    static Set<String> allowedHosts(ConfigNode node) {
        Set<String> names = new TreeSet<>();
        for (String name : node.strings()) {
            if (name.isEmpty() || name.contains(":") || name.contains("/") || name.contains(" ")) {
                throw node.error("must be host names without ports, such as tollgate.local; was '" + name + "'");
            }
            names.add(name.toLowerCase(Locale.ROOT));
        }
        return Set.copyOf(names);
    }

    /** Reads {@code server.max-connections}: 1 to 1 000 000, 10 000 unless the file says. */
    static int maxConnections(ConfigNode node) {
        long most = node.longValue(10_000);
        if (most < 1 || most > 1_000_000) {
            throw node.error("must be 1 to 1000000, was " + most);
        }
        return (int) most;
    }

    /** The largest body the proxy forwards unless {@code server.max-body-size} says otherwise: 16 MiB. */
    static final long DEFAULT_MAX_BODY_BYTES = 16L * 1024 * 1024;

    static final Pattern SIZE = Pattern.compile("(\\d{1,15})\\s*(B|KiB|MiB|GiB)?");

    /** Reads {@code server.max-body-size}: a size such as {@code 16MiB}, {@code 512KiB} or bytes, at least 1. */
    static long maxBodyBytes(ConfigNode node, boolean proxying) {
        if (!node.isPresent()) {
            return DEFAULT_MAX_BODY_BYTES;
        }
        if (!proxying) {
            throw node.error("applies only with an upstream");
        }
        String text = node.string(null);
        Matcher size = SIZE.matcher(text);
        long bytes = size.matches() ? Long.parseLong(size.group(1)) : 0;
        if (bytes < 1) {
            throw node.error(
                    "must be a size of at least one byte, such as 16MiB, 512KiB or 1048576, was '" + text + "'");
        }
        String unit = size.group(2) == null ? "B" : size.group(2);
        int shift = switch (unit) {
            case "KiB" -> 10;
            case "MiB" -> 20;
            case "GiB" -> 30;
            default -> 0;
        };
        return bytes << shift;
    }
}
