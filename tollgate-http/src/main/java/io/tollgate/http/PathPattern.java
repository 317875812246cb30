package io.tollgate.http;

import java.util.Objects;

/**
 * A path pattern: {@code *} matches one path segment or part of one (no {@code /}), {@code **} matches any
 * number of whole segments, including none; everything else matches itself. {@code /api/**} matches
 * {@code /api}, {@code /api/} and {@code /api/users/42}; {@code /users/*}{@code /orders} matches {@code
 * /users/7/orders}; {@code /**} matches every path. A pattern matches a path whatever its case ({@code /api/**}
 * matches {@code /API/x}, which many services serve as {@code /api/x}) unless made {@link #withExactCase()}.
 *
 * <p>Immutable and thread-safe.
 */
public final class PathPattern {

    private static final String ANY_SEGMENTS = "**";

    private final String pattern;
    private final String[] segments;
    private final boolean exactCase;

    private PathPattern(String pattern, boolean exactCase) {
        this.pattern = pattern;
        this.segments = pattern.substring(1).split("/", -1);
        this.exactCase = exactCase;
    }

    /**
     * Compiles a pattern that matches paths whatever their case.
     *
     * @throws IllegalArgumentException if the pattern does not start with {@code /}, or has {@code **}
     *     inside a segment (as in {@code /a**b})
     */
    public static PathPattern of(String pattern) {
        Objects.requireNonNull(pattern, "pattern");
        if (!pattern.startsWith("/")) {
            throw new IllegalArgumentException("path pattern must start with '/', was '" + pattern + "'");
        }
        for (String segment : pattern.split("/", -1)) {
            if (segment.contains(ANY_SEGMENTS) && !segment.equals(ANY_SEGMENTS)) {
                throw new IllegalArgumentException(
                        "'**' must be a whole path segment, as in /api/**; was '" + pattern + "'");
            }
        }
        return new PathPattern(pattern, false);
    }

    /** Returns this pattern matching paths only in the case it is written in, as {@code /API/x} for {@code /API/**}. */
    public PathPattern withExactCase() {
        return exactCase ? this : new PathPattern(pattern, true);
    }

    /** Returns whether this pattern matches paths only in the case it is written in. */
    public boolean isExactCase() {
        return exactCase;
    }

    /**
     * Returns whether {@code path} matches. Takes time proportional to the path's length times the
     * pattern's, without recursion, so that no path a client sends can make matching slow or overflow the
     * stack.
     */
    public boolean matches(String path) {
        if (path == null || !path.startsWith("/")) {
            return false;
        }
        String[] parts = path.substring(1).split("/", -1);
        // Glob matching over segments, where ** is the wildcard: on a mismatch, let the latest ** take one
        // more segment and retry from there.
        int p = 0;
        int s = 0;
        int star = -1;
        int starTook = 0;
        while (s < parts.length) {
            if (p < segments.length && segments[p].equals(ANY_SEGMENTS)) {
                star = p++;
                starTook = s;
            } else if (p < segments.length && segmentMatches(segments[p], parts[s], exactCase)) {
                p++;
                s++;
            } else if (star >= 0) {
                p = star + 1;
                s = ++starTook;
            } else {
                return false;
            }
        }
        while (p < segments.length && segments[p].equals(ANY_SEGMENTS)) {
            p++;
        }
        return p == segments.length;
    }

    /** Glob matching within one segment, where * is the wildcard, in the same way. */
    private static boolean segmentMatches(String glob, String segment, boolean exactCase) {
        if (glob.indexOf('*') < 0) {
            return exactCase ? glob.equals(segment) : glob.equalsIgnoreCase(segment);
        }
        int g = 0;
        int s = 0;
        int star = -1;
        int starTook = 0;
        while (s < segment.length()) {
            if (g < glob.length() && glob.charAt(g) == '*') {
                star = g++;
                starTook = s;
            } else if (g < glob.length() && same(glob.charAt(g), segment.charAt(s), exactCase)) {
                g++;
                s++;
            } else if (star >= 0) {
                g = star + 1;
                s = ++starTook;
            } else {
                return false;
            }
        }
        while (g < glob.length() && glob.charAt(g) == '*') {
            g++;
        }
        return g == glob.length();
    }

    /** Compares characters as {@link String#equalsIgnoreCase} does, unless the case must be exact. */
    private static boolean same(char one, char other, boolean exactCase) {
        if (one == other) {
            return true;
        }
        if (exactCase) {
            return false;
        }
        char upper = Character.toUpperCase(one);
        char otherUpper = Character.toUpperCase(other);
        return upper == otherUpper || Character.toLowerCase(upper) == Character.toLowerCase(otherUpper);
    }

    /** Two patterns are equal when they are written the same and match case alike. */
    @Override
    public boolean equals(Object other) {
        return other instanceof PathPattern that && pattern.equals(that.pattern) && exactCase == that.exactCase;
    }

    @Override
    public int hashCode() {
        return pattern.hashCode() * 31 + Boolean.hashCode(exactCase);
    }

    /** Returns the pattern as written (without saying whether its case is exact). */
    @Override
    public String toString() {
        return pattern;
    }
}
