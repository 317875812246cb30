package io.tollgate.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpUtil;
import io.tollgate.server.CheckApi.Answer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

/**
 * Refuses, on the connection's pipeline, what a web page could make its visitor's browser send to the server's own
 * endpoints (the management port, and the decision API on any port): a page can reach a port on its visitor's
 * machine or network, but cannot choose every header its requests carry.
 *
 * <ul>
 *   <li>On a port that binds this host only, a {@code Host} that does not name this host (a loopback address,
 *       {@code localhost} or a name of {@code server.allowed-hosts}) is 403: a page whose own name was rebound to
 *       127.0.0.1 (DNS rebinding) sends its own name.
 *   <li>A request that changes state (any method but {@code GET} and {@code HEAD}) with an {@code Origin} that is
 *       not the request's own, or a {@code Sec-Fetch-Site} of another site, is 403.
 *   <li>A decision API call whose body is not declared {@code application/json} is 415: a page may send forms and
 *       text to any site, but JSON only where the site allows it (CORS), which this server never does.
 * </ul>
 *
 * <p>The proxy's paths and forward-auth are not this server's own and pass untouched. Not thread-safe: one per
 * connection, called on its event loop only.
 */
final class BrowserRequests extends ChannelInboundHandlerAdapter {

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private final Endpoints endpoints;

    BrowserRequests(Endpoints endpoints) {
        this.endpoints = endpoints;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (message instanceof Exchange exchange) {
            String refusal = refusal(ctx.channel(), exchange);
            if (refusal != null) {
                refuse(ctx, exchange, refusal);
                return;
            }
        }
        ctx.fireChannelRead(message);
    }

    /** Returns why {@code exchange} is refused, as its status and detail ({@code "415 ..."}), or null. */
    private String refusal(Channel channel, Exchange exchange) {
        if (!endpoints.isManagementPort() && !exchange.route.decisionApi()) {
            return null;
        }
        HttpHeaders headers = exchange.request.headers();
        String host = headers.get(HttpHeaderNames.HOST);
        if (host != null && bindsThisHostOnly(channel) && !namesThisHost(host)) {
            return "403 The Host '" + shown(host) + "' does not name this host, whose ports answer this host's own"
                    + " names only: localhost, a loopback address, or one of server.allowed-hosts.";
        }
        HttpMethod method = exchange.request.method();
        if (!method.equals(HttpMethod.GET) && !method.equals(HttpMethod.HEAD)) {
            String origin = headers.get(HttpHeaderNames.ORIGIN);
            if (origin != null && !sameOrigin(origin, host)) {
                return "403 A request from a page of another origin (" + shown(origin) + ") cannot change buckets or"
                        + " settings here.";
            }
            String site = headers.get("Sec-Fetch-Site");
            if (site != null && (site.equalsIgnoreCase("cross-site") || site.equalsIgnoreCase("same-site"))) {
                return "403 A request from a page of another site cannot change buckets or settings here.";
            }
        }
        if (exchange.route.decisionApi() && method.equals(HttpMethod.POST) && !json(headers)) {
            String type = headers.get(HttpHeaderNames.CONTENT_TYPE);
            return "415 The decision API reads JSON: send Content-Type: application/json"
                    + (type == null ? "." : ", not '" + shown(type) + "'.");
        }
        return null;
    }

    /** Whether the port the connection came in on is bound to a loopback address. */
    private static boolean bindsThisHostOnly(Channel channel) {
        Channel server = channel.parent();
        return server != null
                && server.localAddress() instanceof InetSocketAddress bound
                && bound.getAddress() != null
                && bound.getAddress().isLoopbackAddress();
    }

    /** Whether a {@code Host} field names this host: a loopback or other address literal, localhost, or a name given. */
    private boolean namesThisHost(String host) {
        String name = hostName(host).toLowerCase(Locale.ROOT);
        return name.equals("localhost")
                || name.endsWith(".localhost") // RFC 6761: always loopback
                || IPV4.matcher(name).matches()
                || name.startsWith("[") // an IPv6 literal
                || endpoints.hostNames().contains(name);
    }

    private static String hostName(String host) {
        if (host.startsWith("[")) {
            int end = host.indexOf(']');
            return end < 0 ? host : host.substring(0, end + 1);
        }
        int colon = host.lastIndexOf(':');
        return colon < 0 ? host : host.substring(0, colon);
    }

    /** Whether {@code origin} (scheme, host and port) is the request's own authority, {@code host}. */
    private static boolean sameOrigin(String origin, String host) {
        if (host == null || origin.equals("null")) {
            return false;
        }
        try {
            URI uri = new URI(origin);
            if (uri.getHost() == null) {
                return false;
            }
            String authority = uri.getPort() < 0 ? uri.getHost() : uri.getHost() + ":" + uri.getPort();
            String given = host.toLowerCase(Locale.ROOT);
            int defaultPort = "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
            return authority.equalsIgnoreCase(given)
                    || (uri.getPort() < 0 && given.equals(uri.getHost().toLowerCase(Locale.ROOT) + ":" + defaultPort));
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static boolean json(HttpHeaders headers) {
        String type = headers.get(HttpHeaderNames.CONTENT_TYPE);
        if (type == null) {
            return false;
        }
        int semicolon = type.indexOf(';');
        String media = (semicolon < 0 ? type : type.substring(0, semicolon)).strip();
        return media.equalsIgnoreCase("application/json");
    }

    private static void refuse(ChannelHandlerContext ctx, Exchange exchange, String refusal) {
        if (HttpUtil.is100ContinueExpected(exchange.request)) {
            exchange.keepAlive = false; // the client waits to send its body, which is not wanted
        }
        int status = Integer.parseInt(refusal.substring(0, 3));
        Reply.send(ctx, exchange, CompletableFuture.completedFuture(Answer.problem(status, refusal.substring(4))));
    }

    private static String shown(String value) {
        return value.length() <= 100 ? value : value.substring(0, 100) + "...";
    }
}
