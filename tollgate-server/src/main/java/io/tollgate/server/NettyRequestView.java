package io.tollgate.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.tollgate.http.HttpRequestView;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;

/**
 * A request read by the {@link DataPlane} as {@link HttpRequestView} sees it, with its target split into the raw
 * path and query that go upstream unchanged and the canonical path that rules match. Lives as long as one
 * request.
 */
final class NettyRequestView implements HttpRequestView {

    private final HttpRequest request;
    private final String rawPath;
    private final String rawQuery;
    private final String path;
    private final String remoteAddress;

    private NettyRequestView(HttpRequest request, String rawPath, String rawQuery, String path, String remote) {
        this.request = request;
        this.rawPath = rawPath;
        this.rawQuery = rawQuery;
        this.path = path;
        this.remoteAddress = remote;
    }

    /**
     * Reads {@code request}'s target, as Jetty's default URI compliance reads it.
     *
     * @throws IllegalArgumentException naming what is wrong, for a target that is not an origin-form or
     *     absolute-form path, holds a malformed escape, an encoded {@code /}, an encoded dot segment, or dot
     *     segments that climb above the root
     */
    static NettyRequestView of(HttpRequest request, SocketAddress peer) {
        String target = originForm(request.uri());
        int question = target.indexOf('?');
        String rawPath = question < 0 ? target : target.substring(0, question);
        String rawQuery = question < 0 ? null : target.substring(question + 1);
        if (rawQuery != null) {
            checkEscapes(rawQuery);
        }
        String remote = peer instanceof InetSocketAddress address && address.getAddress() != null
                ? address.getAddress().getHostAddress()
                : String.valueOf(peer);
        return new NettyRequestView(request, rawPath, rawQuery, canonical(rawPath), remote);
    }

    /**
     * Returns the path and query of a request target, as sent: the target itself, or the part of an
     * absolute-form target ({@code http://host/path}) after its authority.
     *
     * @throws IllegalArgumentException for a target that is neither
     */
    static String originForm(String target) {
        if (target.startsWith("http://") || target.startsWith("https://")) {
            int slash = target.indexOf('/', target.indexOf("//") + 2);
            target = slash < 0 ? "/" : target.substring(slash);
        }
        if (!target.startsWith("/")) {
            throw new IllegalArgumentException("the request target must be a path, was '" + target + "'");
        }
        return target;
    }

    /** The path as the client sent it, escapes and all, without the query. */
    String rawPath() {
        return rawPath;
    }

    /** The query as the client sent it, or null if there was none. */
    String rawQuery() {
        return rawQuery;
    }

    @Override
    public String method() {
        return request.method().name();
    }

    /** Decoded, with dot segments removed: the path rules match. */
    @Override
    public String path() {
        return path;
    }

    @Override
    public String host() {
        String host = request.headers().get(HttpHeaderNames.HOST);
        if (host == null || host.isEmpty()) {
            return null;
        }
        int end = host.startsWith("[") ? host.indexOf(']') + 1 : host.indexOf(':');
        return (end <= 0 ? host : host.substring(0, end)).toLowerCase(Locale.ROOT);
    }

    @Override
    public List<String> headers(String name) {
        return request.headers().getAll(name);
    }

    @Override
    public String header(String name) {
        return request.headers().get(name);
    }

    @Override
    public String queryParameter(String name) {
        return HttpRequestView.queryParameter(rawQuery, name);
    }

    @Override
    public String remoteAddress() {
        return remoteAddress;
    }

    /** The server authenticates nobody. */
    @Override
    public String principal() {
        return null;
    }

    /**
     * Returns the percent-decoded path with {@code .} and {@code ..} segments removed.
     *
     * @throws IllegalArgumentException for a malformed escape, bytes that are not UTF-8, an encoded {@code /} or
     *     dot segment (ambiguous: the upstream may read them either way), or a {@code ..} above the root
     */
    static String canonical(String rawPath) {
        Deque<String> segments = new ArrayDeque<>();
        String[] raw = rawPath.split("/", -1);
        for (int i = 1; i < raw.length; i++) {
            String segment = decode(raw[i]);
            boolean dots = segment.equals(".") || segment.equals("..");
            if (dots && !raw[i].equals(segment)) {
                throw new IllegalArgumentException("ambiguous path: an encoded dot segment in '" + rawPath + "'");
            }
            if (segment.equals("..")) {
                if (segments.isEmpty()) {
                    throw new IllegalArgumentException("the path '" + rawPath + "' climbs above the root");
                }
                segments.removeLast();
                if (i == raw.length - 1) {
                    segments.addLast("");
                }
            } else if (segment.equals(".")) {
                if (i == raw.length - 1) {
                    segments.addLast("");
                }
            } else {
                segments.addLast(segment);
            }
        }
        return "/" + String.join("/", segments);
    }

    /** Throws for a {@code %} not followed by two hexadecimal digits: such a URI is not one to forward. */
    private static void checkEscapes(String raw) {
        for (int i = raw.indexOf('%'); i >= 0; i = raw.indexOf('%', i + 1)) {
            if (i + 2 >= raw.length()
                    || Character.digit(raw.charAt(i + 1), 16) < 0
                    || Character.digit(raw.charAt(i + 2), 16) < 0) {
                throw new IllegalArgumentException(
                        "The request's URI cannot be forwarded: a malformed escape at '" + raw.substring(i) + "'");
            }
        }
    }

    private static String decode(String segment) {
        if (segment.indexOf('%') < 0) {
            return segment;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(segment.length());
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c != '%') {
                bytes.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
                continue;
            }
            int high = i + 2 < segment.length() ? Character.digit(segment.charAt(i + 1), 16) : -1;
            int low = high < 0 ? -1 : Character.digit(segment.charAt(i + 2), 16);
            if (low < 0) {
                throw new IllegalArgumentException("a malformed escape in the path at '" + segment.substring(i) + "'");
            }
            int b = high * 16 + low;
            if (b == '/') {
                throw new IllegalArgumentException("ambiguous path: an encoded '/' in '" + segment + "'");
            }
            bytes.write(b);
            i += 2;
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("the path segment '" + segment + "' is not UTF-8");
        }
    }
}
