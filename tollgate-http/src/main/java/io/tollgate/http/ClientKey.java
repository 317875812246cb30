package io.tollgate.http;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Where a rule finds the key that identifies a client: the client IP, a header, a query parameter, the
 * authenticated principal, a constant, or several of these together.
 *
 * <p>Keys carry their source ({@code ip:203.0.113.7}, {@code header:X-API-Key:abc}), so that a header value
 * can never collide with an IP address under the same policy.
 */
public sealed interface ClientKey {

    /**
     * Returns the key for {@code request}, or null if the request lacks its source (no such header, no
     * principal).
     */
    String resolve(HttpRequestView request, ClientIpResolver ips);

    /**
     * Returns the client's own value for {@code request}, without the source that {@link #resolve} adds: the
     * IP address, the header's or parameter's value, the principal's name; for a key of several sources, the
     * key as {@link #resolve} gives it. Null when the request lacks the source. This is what a rule's lists,
     * overrides and API-key tables name.
     */
    String value(HttpRequestView request, ClientIpResolver ips);

    /** Returns how this key is written in configuration, such as {@code header:X-API-Key}. */
    String describe();

    /**
     * Returns why {@code request} names its client in more than one way for this key, such as an {@code X-API-Key}
     * given twice (this limiter and the service behind it could read different ones), or null if it does not.
     */
    default String ambiguity(HttpRequestView request) {
        return null;
    }

    /** The client's IP address, as the {@link ClientIpResolver} finds it. */
    static ClientKey ip() {
        return Ip.INSTANCE;
    }

    /** The value of a request header, such as an API key. */
    static ClientKey header(String name) {
        return new Header(name);
    }

    /** The value of a query parameter. */
    static ClientKey query(String name) {
        return new Query(name);
    }

    /** The authenticated principal's name. */
    static ClientKey principal() {
        return Principal.INSTANCE;
    }

    /** The same key for every request: one bucket shared by all clients, a global limit. */
    static ClientKey constant(String value) {
        return new Constant(value);
    }

    /** All the given keys together, such as an API key per IP; missing if any part is missing. */
    static ClientKey composite(ClientKey... parts) {
        return new Composite(List.of(parts));
    }

    /**
     * Parses a key as configuration writes it: {@code ip}, {@code header:NAME}, {@code query:NAME}, {@code
     * principal}, {@code constant:VALUE}, or several joined by {@code +}, such as {@code ip+header:X-API-Key}.
     *
     * @throws IllegalArgumentException if the text is not a key, naming it
     */
    static ClientKey parse(String text) {
        Objects.requireNonNull(text, "text");
        if (text.contains("+")) {
            String[] parts = text.split("\\+", -1);
            ClientKey[] keys = new ClientKey[parts.length];
            for (int i = 0; i < parts.length; i++) {
                keys[i] = parse(parts[i]);
            }
            return composite(keys);
        }
        String trimmed = text.strip();
        int colon = trimmed.indexOf(':');
        String kind = colon < 0 ? trimmed : trimmed.substring(0, colon);
        String argument = colon < 0 ? "" : trimmed.substring(colon + 1).strip();
        switch (kind) {
            case "ip":
                if (colon < 0) {
                    return ip();
                }
                break;
            case "principal":
                if (colon < 0) {
                    return principal();
                }
                break;
            case "header":
                if (!argument.isEmpty()) {
                    return header(argument);
                }
                break;
            case "query":
                if (!argument.isEmpty()) {
                    return query(argument);
                }
                break;
            case "constant":
                if (!argument.isEmpty()) {
                    return constant(argument);
                }
                break;
            default:
                break;
        }
        throw new IllegalArgumentException("invalid key '" + text
                + "': use ip, header:NAME, query:NAME, principal, constant:VALUE, or several joined by '+'");
    }

    /** Escapes the separator of composite keys, so that no value can pose as two parts. */
    private static String escaped(String value) {
        return value.indexOf('|') < 0 && value.indexOf('\\') < 0
                ? value
                : value.replace("\\", "\\\\").replace("|", "\\|");
    }

    private static String requireName(String name, String what) {
        Objects.requireNonNull(name, what);
        if (name.isBlank()) {
            throw new IllegalArgumentException(what + " name must not be blank");
        }
        return name;
    }

    /** The client IP key. */
    enum Ip implements ClientKey {
        INSTANCE;

        @Override
        public String resolve(HttpRequestView request, ClientIpResolver ips) {
            String ip = ips.clientIp(request);
            return ip == null ? null : "ip:" + ip;
        }

        @Override
        public String value(HttpRequestView request, ClientIpResolver ips) {
            return ips.clientIp(request);
        }

        @Override
        public String describe() {
            return "ip";
        }
    }

    /** The principal key. */
    enum Principal implements ClientKey {
        INSTANCE;

        @Override
        public String resolve(HttpRequestView request, ClientIpResolver ips) {
            String name = request.principal();
            return name == null || name.isEmpty() ? null : "principal:" + name;
        }

        @Override
        public String value(HttpRequestView request, ClientIpResolver ips) {
            String name = request.principal();
            return name == null || name.isEmpty() ? null : name;
        }

        @Override
        public String describe() {
            return "principal";
        }
    }

    /** A header key. */
    record Header(String name) implements ClientKey {

        /**
         * Creates the key of header {@code name}.
         *
         * @throws IllegalArgumentException if name is blank
         */
        public Header {
            requireName(name, "header");
        }

        @Override
        public String resolve(HttpRequestView request, ClientIpResolver ips) {
            String value = request.header(name);
            return value == null || value.isBlank()
                    ? null
                    : "header:" + name.toLowerCase(Locale.ROOT) + ":" + escaped(value.strip());
        }

        @Override
        public String value(HttpRequestView request, ClientIpResolver ips) {
            String value = request.header(name);
            return value == null || value.isBlank() ? null : value.strip();
        }

        @Override
        public String describe() {
            return "header:" + name;
        }

        @Override
        public String ambiguity(HttpRequestView request) {
            int given = request.headers(name).size();
            return given > 1 ? "This request gives " + name + " " + given + " times; a client is named once." : null;
        }
    }

    /** A query parameter key. */
    record Query(String name) implements ClientKey {

        /**
         * Creates the key of query parameter {@code name}.
         *
         * @throws IllegalArgumentException if name is blank
         */
        public Query {
            requireName(name, "query parameter");
        }

        @Override
        public String resolve(HttpRequestView request, ClientIpResolver ips) {
            String value = request.queryParameter(name);
            return value == null || value.isBlank() ? null : "query:" + name + ":" + escaped(value);
        }

        @Override
        public String value(HttpRequestView request, ClientIpResolver ips) {
            String value = request.queryParameter(name);
            return value == null || value.isBlank() ? null : value;
        }

        @Override
        public String describe() {
            return "query:" + name;
        }
    }

    /** A constant key. */
    record Constant(String value) implements ClientKey {

        /**
         * Creates the key that is always {@code value}.
         *
         * @throws IllegalArgumentException if value is blank
         */
        public Constant {
            requireName(value, "constant");
        }

        @Override
        public String resolve(HttpRequestView request, ClientIpResolver ips) {
            return "constant:" + value;
        }

        @Override
        public String value(HttpRequestView request, ClientIpResolver ips) {
            return value;
        }

        @Override
        public String describe() {
            return "constant:" + value;
        }
    }

    /** A key made of several. */
    record Composite(List<ClientKey> parts) implements ClientKey {

        /**
         * Creates the key made of {@code parts}, in order.
         *
         * @throws IllegalArgumentException if there are fewer than two parts
         */
        public Composite {
            parts = List.copyOf(parts);
            if (parts.size() < 2) {
                throw new IllegalArgumentException("a composite key needs at least two parts, has " + parts.size());
            }
        }

        @Override
        public String resolve(HttpRequestView request, ClientIpResolver ips) {
            StringBuilder key = new StringBuilder();
            for (ClientKey part : parts) {
                String resolved = part.resolve(request, ips);
                if (resolved == null) {
                    return null;
                }
                key.append(key.length() == 0 ? "" : "|").append(resolved);
            }
            return key.toString();
        }

        @Override
        public String value(HttpRequestView request, ClientIpResolver ips) {
            return resolve(request, ips);
        }

        @Override
        public String ambiguity(HttpRequestView request) {
            for (ClientKey part : parts) {
                String ambiguity = part.ambiguity(request);
                if (ambiguity != null) {
                    return ambiguity;
                }
            }
            return null;
        }

        @Override
        public String describe() {
            StringBuilder text = new StringBuilder();
            for (ClientKey part : parts) {
                text.append(text.length() == 0 ? "" : "+").append(part.describe());
            }
            return text.toString();
        }
    }
}
