package io.tollgate.server;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The header fields that cross the proxy, both ways: the request's head as it goes upstream (the client's
 * address, scheme and host said in {@code X-Forwarded-*}), and the end-to-end fields copied onto the answer,
 * hop-by-hop fields and those {@code Connection} names left behind (RFC 9110, 7.6.1).
 */
final class ProxiedHeads {

    /** Header fields that concern one connection, never forwarded (RFC 9110, 7.6.1), in lower case. */
    private static final List<AsciiString> HOP_BY_HOP = List.of(
            HttpHeaderNames.CONNECTION,
            HttpHeaderNames.KEEP_ALIVE,
            AsciiString.cached("proxy-connection"),
            HttpHeaderNames.PROXY_AUTHENTICATE,
            HttpHeaderNames.PROXY_AUTHORIZATION,
            HttpHeaderNames.TE,
            HttpHeaderNames.TRAILER,
            HttpHeaderNames.TRANSFER_ENCODING,
            HttpHeaderNames.UPGRADE);

    /**
     * Fields that proxies and CDNs write with the client's address, which upstreams trust as they trust {@code
     * X-Forwarded-For}: from a client that is not a trusted proxy they are its own claims, and go no further.
     */
    private static final List<String> CLIENT_ADDRESS_CLAIMS = List.of(
            "X-Real-IP",
            "True-Client-IP",
            "X-Client-IP",
            "CF-Connecting-IP",
            "Fastly-Client-IP",
            "X-Cluster-Client-IP");

    private ProxiedHeads() {}

    /** Whether a body follows the request's head: a length above zero, or chunks. */
    static boolean announcesBody(HttpRequest request) {
        return HttpUtil.getContentLength(request, 0L) > 0 || HttpUtil.isTransferEncodingChunked(request);
    }

    /**
     * Returns the request's head as it goes upstream: its target (its path in normal form) under the upstream's path
     * prefix, its end-to-end fields, {@code Host} the upstream's, {@code X-Forwarded-For}, {@code -Proto} and {@code
     * -Host} appended to when the peer is a trusted proxy ({@code trusted}) and set anew when not (where the
     * client's own claims of its address, such as {@code X-Real-IP}, are dropped), and {@code Via}.
     */
    static HttpRequest upstreamHead(
            HttpRequest request, NettyRequestView view, UpstreamConnections upstreams, boolean trusted) {
        String target =
                upstreams.pathPrefix() + view.forwardedPath() + (view.rawQuery() == null ? "" : "?" + view.rawQuery());
        HttpRequest out =
                new DefaultHttpRequest(HttpVersion.HTTP_1_1, request.method(), target, Exchanges.RESPONSE_HEADERS);
        HttpHeaders headers = out.headers();
        copyEndToEnd(request.headers(), headers);
        headers.remove(HttpHeaderNames.EXPECT);
        headers.set(HttpHeaderNames.HOST, upstreams.authority());
        if (HttpUtil.isTransferEncodingChunked(request)) {
            headers.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        String peer = view.remoteAddress();
        HttpHeaders in = request.headers();
        // Every field a trusted proxy wrote, as the client IP was read from all of them
        List<String> forwardedLines = in.getAll("X-Forwarded-For");
        String forwardedFor = forwardedLines.isEmpty() ? null : String.join(", ", forwardedLines);
        String proto = in.get("X-Forwarded-Proto");
        String forwardedHost = in.get("X-Forwarded-Host");
        String host = in.get(HttpHeaderNames.HOST);
        headers.set("X-Forwarded-For", trusted && forwardedFor != null ? forwardedFor + ", " + peer : peer);
        headers.set("X-Forwarded-Proto", trusted && proto != null ? proto : "http");
        if (trusted && forwardedHost != null) {
            headers.set("X-Forwarded-Host", forwardedHost);
        } else if (host != null) {
            headers.set("X-Forwarded-Host", host);
        } else {
            headers.remove("X-Forwarded-Host");
        }
        if (!trusted) {
            headers.remove("Forwarded"); // a client's own claim; the X-Forwarded-* above say it
            for (String claim : CLIENT_ADDRESS_CLAIMS) {
                headers.remove(claim); // what upstreams read as the client's address, from nobody who knows it
            }
        }
        String via = in.get(HttpHeaderNames.VIA);
        headers.set(HttpHeaderNames.VIA, via == null ? "1.1 tollgate" : via + ", 1.1 tollgate");
        return out;
    }

    /**
     * Copies the end-to-end header fields: all but the hop-by-hop ones and those {@code Connection} names. On every
     * proxied request and answer, so names are compared without building strings.
     */
    static void copyEndToEnd(HttpHeaders from, HttpHeaders to) {
        List<String> connection = connectionTokens(from);
        Iterator<Map.Entry<CharSequence, CharSequence>> fields = from.iteratorCharSequence();
        while (fields.hasNext()) {
            Map.Entry<CharSequence, CharSequence> field = fields.next();
            if (!hopByHop(field.getKey(), connection)) {
                to.add(field.getKey(), field.getValue());
            }
        }
    }

    private static boolean hopByHop(CharSequence name, List<String> connection) {
        for (AsciiString hop : HOP_BY_HOP) {
            if (hop.contentEqualsIgnoreCase(name)) {
                return true;
            }
        }
        for (String token : connection) {
            if (AsciiString.contentEqualsIgnoreCase(token, name)) {
                return true;
            }
        }
        return false;
    }

    /** The field names the {@code Connection} fields list, each once per mention; read once per message. */
    private static List<String> connectionTokens(HttpHeaders headers) {
        List<String> values = headers.getAll(HttpHeaderNames.CONNECTION);
        if (values.isEmpty()) {
            return values;
        }
        List<String> tokens = new ArrayList<>(values.size());
        for (String value : values) {
            int start = 0;
            while (start <= value.length()) {
                int comma = value.indexOf(',', start);
                int end = comma < 0 ? value.length() : comma;
                String token = value.substring(start, end).trim();
                if (!token.isEmpty()) {
                    tokens.add(token);
                }
                start = end + 1;
            }
        }
        return tokens;
    }
}
