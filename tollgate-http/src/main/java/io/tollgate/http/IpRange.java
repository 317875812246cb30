package io.tollgate.http;

/**
 * A block of IP addresses in CIDR notation, such as {@code 10.0.0.0/8} or {@code 2001:db8::/32}; a single
 * address stands for itself.
 */
record IpRange(IpAddress network, int bits) {

    /**
     * Parses a CIDR block.
     *
     * @throws IllegalArgumentException if the text is not an address or address/bits, naming it
     */
    static IpRange parse(String cidr) {
        String text = cidr.strip();
        int slash = text.indexOf('/');
        IpAddress address = IpAddress.parse(slash < 0 ? text : text.substring(0, slash));
        if (address == null) {
            throw new IllegalArgumentException("invalid trusted proxy '" + cidr + "': not an IP address or CIDR block");
        }
        int max = address.bytes().length * 8;
        int bits = max;
        if (slash >= 0) {
            try {
                bits = Integer.parseInt(text.substring(slash + 1));
            } catch (NumberFormatException e) {
                bits = -1;
            }
            if (bits < 0 || bits > max) {
                throw new IllegalArgumentException(
                        "invalid trusted proxy '" + cidr + "': prefix length must be 0 to " + max);
            }
        }
        return new IpRange(address.prefix(bits), bits);
    }

    /**
     * Parses {@code text} if it is an IP address or a CIDR block, else returns null.
     *
     * @throws IllegalArgumentException if it is an address with a bad prefix length
     */
    static IpRange tryParse(String text) {
        String stripped = text.strip();
        int slash = stripped.indexOf('/');
        if (IpAddress.parse(slash < 0 ? stripped : stripped.substring(0, slash)) == null) {
            return null;
        }
        try {
            return parse(stripped);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage().replace("invalid trusted proxy", "invalid IP block"), e);
        }
    }

    boolean contains(IpAddress address) {
        return address.bytes().length == network.bytes().length
                && address.prefix(bits).equals(network);
    }
}
