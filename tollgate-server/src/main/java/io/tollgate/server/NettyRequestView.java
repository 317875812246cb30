package io.tollgate.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.tollgate.http.HttpRequestView;
import io.tollgate.http.NormalPath;
import io.tollgate.http.PathSettings;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Locale;

/**
 * A request read by the {@link DataPlane} as {@link HttpRequestView} sees it, with its target split into its path in
 * normal form ({@link NormalPath}: the form that rules match and that goes upstream) and its query, which goes
 * upstream as sent. Lives as long as one request.
 */
final class NettyRequestView implements HttpRequestView {

    private final HttpRequest request;
    private final NormalPath path;
    private final String rawQuery;
    private final String remoteAddress;

    private NettyRequestView(HttpRequest request, NormalPath path, String rawQuery, String remote) {
        this.request = request;
        this.path = path;
        this.rawQuery = rawQuery;
        this.remoteAddress = remote;
    }

    /**
     * Reads {@code request}'s target, its path by {@code paths}.
     *
     * @throws IllegalArgumentException naming what is wrong, for a target that is not an origin-form or
     *     absolute-form path, a path that {@link NormalPath} refuses, or a query with a malformed escape
     */
    static NettyRequestView of(HttpRequest request, SocketAddress peer, PathSettings paths) {
        return of(request, peer, paths, null);
    }

    /**
     * Reads {@code request}'s target as {@link #of(HttpRequest, SocketAddress, PathSettings)} does, with its path
     * already read into {@code normal} where not null (as routing read it), so that it is read once.
     */
    static NettyRequestView of(HttpRequest request, SocketAddress peer, PathSettings paths, NormalPath normal) {
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
        return new NettyRequestView(
                request, normal != null ? normal : NormalPath.parse(rawPath, paths), rawQuery, remote);
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

    /** The path in normal form as it goes upstream, escapes kept ({@link NormalPath#encoded()}). */
    String forwardedPath() {
        return path.encoded();
    }

    /** The query as the client sent it, or null if there was none. */
    String rawQuery() {
        return rawQuery;
    }

    @Override
    public String method() {
        return request.method().name();
    }

    /** The normal form decoded: the path rules match. */
    @Override
    public String path() {
        return path.decoded();
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
}
