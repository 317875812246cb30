package io.tollgate.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Finds the IP address of the client behind a request, so that it can be a rate-limit key.
 *
 * <p>By default that is the address of the peer that opened the connection: headers are not believed, so
 * a client cannot pick its own key by sending {@code X-Forwarded-For}. Behind reverse proxies, name them
 * with {@link Builder#trustedProxies}: when the peer is a trusted proxy, the forwarding header is read from
 * the right (the entry the proxy itself added) leftwards, skipping trusted proxies, and the first address
 * that is not a trusted proxy is the client. Entries left of it, which the client could have written, are
 * never used. If every entry is a trusted proxy, the left-most is the client; if an entry is not an IP
 * address (garbage, {@code unknown}, an obfuscated name), the address that reported it is.
 *
 * <p>Only one header is read, the one the proxies set: {@code X-Forwarded-For} by default, or RFC 7239
 * {@code Forwarded}. Addresses are written canonically (IPv6 compressed and lower-case, IPv4-mapped IPv6 as
 * IPv4), and an IPv6 client is its /64 network unless the builder says otherwise, since one client often owns a whole
 * /64.
 *
 * <p>Immutable and thread-safe.
 */
public final class ClientIpResolver {

    /** The header that trusted proxies write the client's address into. */
    public enum ForwardingHeader {
        /** {@code X-Forwarded-For: client, proxy1, proxy2}. */
        X_FORWARDED_FOR,
        /** RFC 7239 {@code Forwarded: for=client, for=proxy1}. */
        FORWARDED
    }

    private static final ClientIpResolver PEER_ONLY = new Builder().build();

    private final List<IpRange> trustedProxies;
    private final ForwardingHeader header;
    private final boolean groupIpv6;

    private ClientIpResolver(Builder builder) {
        this.trustedProxies = List.copyOf(builder.trustedProxies);
        this.header = builder.header;
        this.groupIpv6 = builder.groupIpv6;
    }

    /** Returns a resolver that trusts no proxy: the client is the connection's peer (an IPv6 one, its /64). */
    public static ClientIpResolver peerOnly() {
        return PEER_ONLY;
    }

    /** Returns a builder. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the client's address in canonical form (or its /64 network, if grouping), or the peer address
     * as given if that is not an IP address, or null if the request has none.
     */
    public String clientIp(HttpRequestView request) {
        IpAddress client = clientAddress(request);
        if (client == null) {
            String peerText = request.remoteAddress();
            return peerText == null || peerText.isEmpty() ? null : peerText;
        }
        return groupIpv6 && client.isIpv6() ? client.prefix(64) + "/64" : client.toString();
    }

    /**
     * Returns the client's own address, never grouped (what allow and deny lists match), or null where the peer is
     * not an IP address.
     */
    IpAddress clientAddress(HttpRequestView request) {
        IpAddress peer = IpAddress.parse(request.remoteAddress());
        if (peer == null) {
            return null;
        }
        IpAddress client = peer;
        if (isTrusted(peer)) {
            List<String> hops = header == ForwardingHeader.FORWARDED
                    ? forwardedFor(request.headers("Forwarded"))
                    : commaSeparated(request.headers("X-Forwarded-For"));
            for (int i = hops.size() - 1; i >= 0; i--) {
                IpAddress hop = IpAddress.parse(hops.get(i));
                if (hop == null) {
                    break; // the proxy that reported this was the last address we can vouch for
                }
                client = hop;
                if (!isTrusted(hop)) {
                    break;
                }
            }
        }
        return client;
    }

    /**
     * Returns whether {@code address} is one of the trusted proxies, whose forwarding headers are believed;
     * false for anything that is not an IP address. A proxy in front of an upstream uses this to decide
     * whether to pass the forwarding headers it received on, or to replace them.
     */
    public boolean isTrustedProxy(String address) {
        IpAddress parsed = IpAddress.parse(address);
        return parsed != null && isTrusted(parsed);
    }

    private boolean isTrusted(IpAddress address) {
        for (IpRange range : trustedProxies) {
            if (range.contains(address)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> commaSeparated(List<String> values) {
        List<String> hops = new ArrayList<>();
        for (String value : values) {
            for (String hop : value.split(",", -1)) {
                hops.add(hop.strip());
            }
        }
        return hops;
    }

    /** Returns the {@code for=} node of every forwarded-element, as an address literal or as found. */
    private static List<String> forwardedFor(List<String> values) {
        List<String> hops = new ArrayList<>();
        for (String element : commaSeparated(values)) {
            String node = "";
            for (String pair : element.split(";")) {
                int equals = pair.indexOf('=');
                if (equals > 0
                        && pair.substring(0, equals)
                                .strip()
                                .toLowerCase(Locale.ROOT)
                                .equals("for")) {
                    node = node(pair.substring(equals + 1).strip());
                }
            }
            hops.add(node);
        }
        return hops;
    }

    /** Returns the address of a node: unquoted, without brackets or port. */
    private static String node(String value) {
        String node = value;
        if (node.length() >= 2 && node.startsWith("\"") && node.endsWith("\"")) {
            node = node.substring(1, node.length() - 1);
        }
        if (node.startsWith("[")) {
            int close = node.indexOf(']');
            return close < 0 ? "" : node.substring(1, close);
        }
        int colon = node.indexOf(':');
        return colon >= 0 && node.indexOf(':', colon + 1) < 0 ? node.substring(0, colon) : node;
    }

    /** Settings for a {@link ClientIpResolver}. Not thread-safe. */
    public static final class Builder {

        private final List<IpRange> trustedProxies = new ArrayList<>();
        private ForwardingHeader header = ForwardingHeader.X_FORWARDED_FOR;
        private boolean groupIpv6 = true;

        private Builder() {}

        /**
         * Adds the proxies whose forwarding header is believed, as addresses or CIDR blocks such as {@code
         * 10.0.0.0/8} or {@code fd00::/8}.
         *
         * @throws IllegalArgumentException if an entry is not an address or CIDR block, naming it
         */
        public Builder trustedProxies(List<String> cidrs) {
            for (String cidr : Objects.requireNonNull(cidrs, "cidrs")) {
                trustedProxies.add(IpRange.parse(Objects.requireNonNull(cidr, "cidr")));
            }
            return this;
        }

        /** Sets the header that the trusted proxies write (default {@code X-Forwarded-For}). */
        public Builder forwardingHeader(ForwardingHeader header) {
            this.header = Objects.requireNonNull(header, "header");
            return this;
        }

        /**
         * Whether every IPv6 client is its /64 network, such as {@code 2001:db8:1:2::/64} (default true: one client
         * commonly owns a whole /64, and would otherwise have 2^64 buckets); false keys each address alone.
         */
        public Builder groupIpv6By64(boolean group) {
            this.groupIpv6 = group;
            return this;
        }

        /** Returns the resolver. */
        public ClientIpResolver build() {
            return new ClientIpResolver(this);
        }
    }
}
