package io.tollgate.http;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What rate limiting needs to know of an HTTP request, whatever server received it. The servlet filter,
 * the Spring starter and the Tollgate server each adapt their own request type to this.
 *
 * <p>Implementations answer from the request as received and never throw for a malformed value: a header
 * or parameter that cannot be read is absent.
 */
public interface HttpRequestView {

    /** Returns the method, such as {@code GET}. */
    String method();

    /**
     * Returns the path that the application routes by, without the query, such as {@code /api/users/42}:
     * percent-decoded, with dot segments removed and relative to the application's context path, as the
     * server's own routing sees it. Rules match this form, so that {@code /%61pi/x} or {@code
     * /public/../api/x} cannot dodge a rule for {@code /api/**}.
     */
    String path();

    /** Returns the host the request was sent to (the Host header), without a port, or null. */
    String host();

    /** Returns every value of a header, in the order received; empty if there is none. Names ignore case. */
    List<String> headers(String name);

    /** Returns the first value of a header, or null. */
    default String header(String name) {
        List<String> values = headers(name);
        return values.isEmpty() ? null : values.get(0);
    }

    /** Returns the first value of a query parameter, decoded, or null. */
    String queryParameter(String name);

    /**
     * Returns the first value of parameter {@code name} in a raw query string (as in {@code a=1&b=%20x}),
     * decoded as UTF-8; null if there is none. A pair with a malformed escape is skipped, as if absent. For
     * implementations that read the query string themselves rather than through a framework that might
     * consume a form body.
     */
    static String queryParameter(String rawQuery, String name) {
        if (rawQuery == null) {
            return null;
        }
        for (String pair : rawQuery.split("&")) {
            int equals = pair.indexOf('=');
            String rawName = equals < 0 ? pair : pair.substring(0, equals);
            String rawValue = equals < 0 ? "" : pair.substring(equals + 1);
            try {
                if (URLDecoder.decode(rawName, StandardCharsets.UTF_8).equals(name)) {
                    return URLDecoder.decode(rawValue, StandardCharsets.UTF_8);
                }
            } catch (IllegalArgumentException malformed) {
                // the client sent an invalid escape: this pair does not count
            }
        }
        return null;
    }

    /** Returns the IP address of the peer that opened the connection (the socket's remote address). */
    String remoteAddress();

    /** Returns the name of the authenticated user, or null. */
    String principal();
}
