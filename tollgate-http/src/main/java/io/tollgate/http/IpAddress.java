package io.tollgate.http;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * An IP address literal, parsed strictly and without ever consulting DNS, and written in one canonical
 * form: IPv4 as dotted quad, IPv6 compressed and lower-case ({@code 2001:db8::1}), IPv4-mapped IPv6 as the
 * IPv4 address. Zone ids ({@code %eth0}) are dropped.
 *
 * @param bytes 4 or 16 bytes
 */
record IpAddress(byte[] bytes) {

    /** Returns the address written in {@code text}, or null if it is not an IP address literal. */
    static IpAddress parse(String text) {
        if (text == null) {
            return null;
        }
        String literal = text.strip();
        if (literal.length() > 2 && literal.charAt(0) == '[' && literal.charAt(literal.length() - 1) == ']') {
            literal = literal.substring(1, literal.length() - 1);
        }
        int zone = literal.indexOf('%');
        if (zone >= 0) {
            literal = literal.substring(0, zone);
        }
        if (literal.isEmpty() || literal.length() > 45) {
            return null;
        }
        if (literal.indexOf(':') < 0) {
            // IPv4, read here: every proxied request's peer comes this way, and InetAddress costs more
            byte[] bytes = ipv4(literal);
            return bytes == null ? null : new IpAddress(bytes);
        }
        if (!isIpv6Syntax(literal)) {
            return null;
        }
        try {
            // Only literals reach this point, so InetAddress parses them without a lookup.
            byte[] bytes = InetAddress.getByName(literal).getAddress();
            return new IpAddress(unmapped(bytes));
        } catch (UnknownHostException | SecurityException e) {
            return null;
        }
    }

    /** Whether {@code literal} holds only what an IPv6 literal may (hex digits, colons, dots). */
    private static boolean isIpv6Syntax(String literal) {
        for (int i = 0; i < literal.length(); i++) {
            char c = literal.charAt(i);
            if (!(Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
                return false;
            }
        }
        return true;
    }

    /**
     * Reads a dotted-quad IPv4 literal: four decimal parts of ASCII digits, each at most 255, without leading zeros
     * (010.1.1.1 is ambiguous: octal to some readers); returns its four bytes, or null for anything else.
     */
    private static byte[] ipv4(String literal) {
        byte[] bytes = new byte[4];
        int n = literal.length();
        int i = 0;
        for (int part = 0; part < 4; part++) {
            int start = i;
            int value = 0;
            while (i < n && literal.charAt(i) >= '0' && literal.charAt(i) <= '9' && i - start < 3) {
                value = value * 10 + (literal.charAt(i) - '0');
                i++;
            }
            int length = i - start;
            if (length == 0 || value > 255 || (length > 1 && literal.charAt(start) == '0')) {
                return null;
            }
            bytes[part] = (byte) value;
            if (part < 3) {
                if (i >= n || literal.charAt(i) != '.') {
                    return null;
                }
                i++;
            }
        }
        return i == n ? bytes : null;
    }

    private static byte[] unmapped(byte[] bytes) {
        if (bytes.length == 16) {
            boolean mapped = bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
            for (int i = 0; i < 10 && mapped; i++) {
                mapped = bytes[i] == 0;
            }
            if (mapped) {
                return new byte[] {bytes[12], bytes[13], bytes[14], bytes[15]};
            }
        }
        return bytes;
    }

    boolean isIpv6() {
        return bytes.length == 16;
    }

    /** Returns this address with all but the first {@code bits} bits cleared. */
    IpAddress prefix(int bits) {
        byte[] masked = bytes.clone();
        for (int i = 0; i < masked.length; i++) {
            int keep = Math.max(0, Math.min(8, bits - 8 * i));
            masked[i] &= (byte) (0xff << (8 - keep));
        }
        return new IpAddress(masked);
    }

    /** Returns the canonical text of the address. */
    @Override
    public String toString() {
        if (bytes.length == 4) {
            return (bytes[0] & 0xff) + "." + (bytes[1] & 0xff) + "." + (bytes[2] & 0xff) + "." + (bytes[3] & 0xff);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((bytes[2 * i] & 0xff) << 8) | (bytes[2 * i + 1] & 0xff);
        }
        // RFC 5952: compress the longest run of two or more zero groups, the first on a tie.
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                text.append("::");
                i += bestLength - 1;
                continue;
            }
            if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
                text.append(':');
            }
            text.append(Integer.toHexString(groups[i]));
        }
        return text.toString();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IpAddress that && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }
}
