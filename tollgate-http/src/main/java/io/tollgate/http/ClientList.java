package io.tollgate.http;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * An allowlist or denylist of a rule: client keys, and client IP addresses or CIDR blocks. An entry that is
 * an IP address or a CIDR block matches the request's client IP (as {@link ClientIpResolver} finds it behind
 * trusted proxies); any other entry matches the rule's client key exactly. Immutable.
 */
record ClientList(List<String> entries, Set<String> keys, List<IpRange> ranges) {

    static final ClientList NONE = of(List.of());

    /**
     * @throws IllegalArgumentException if an entry is blank, or an IP block has a bad prefix length
     */
    static ClientList of(List<String> entries) {
        Set<String> keys = new LinkedHashSet<>();
        List<IpRange> ranges = new ArrayList<>();
        for (String entry : entries) {
            if (entry == null || entry.isBlank()) {
                throw new IllegalArgumentException("a list entry must be a client key, an IP address or a CIDR block");
            }
            IpRange range = IpRange.tryParse(entry);
            if (range != null) {
                ranges.add(range);
            } else {
                keys.add(entry);
            }
        }
        return new ClientList(List.copyOf(entries), Set.copyOf(keys), List.copyOf(ranges));
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    /** Whether the key, or the client IP that {@code clientIps} finds for the request, is listed. */
    boolean matches(String key, HttpRequestView request, ClientIpResolver clientIps) {
        if (keys.contains(key)) {
            return true;
        }
        if (ranges.isEmpty()) {
            return false;
        }
        IpAddress address = clientIps.clientAddress(request); // its own, not its /64
        if (address == null) {
            return false;
        }
        for (IpRange range : ranges) {
            if (range.contains(address)) {
                return true;
            }
        }
        return false;
    }
}
