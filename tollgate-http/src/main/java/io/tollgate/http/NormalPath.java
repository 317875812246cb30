package io.tollgate.http;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A request's path in its one normal form: the form that rules match and that the proxy forwards, so that no
 * request reaches a service by a path its rules did not count. From the path as the client sent it:
 *
 * <ol>
 *   <li>escapes of unreserved characters ({@code A-Z a-z 0-9 - . _ ~}) are decoded, other escapes written in
 *       upper case, and characters that a URI may not hold unescaped ({@code " < > [ ] ^ ` { | }}) escaped (RFC 3986,
 *       6.2.2.1 and 6.2.2.2);
 *   <li>empty segments ({@code //}) are dropped, as nginx and most frameworks do ({@link
 *       PathSettings#mergeSlashes});
 *   <li>each segment's {@code ;parameters} are dropped, as Tomcat, Jetty and Spring drop them before routing
 *       (unless {@link PathSettings#parameters} keeps them);
 *   <li>dot segments are removed (RFC 3986, 5.2.4), a segment being one whose name before any {@code ;parameters}
 *       is {@code .} or {@code ..}, as Tomcat reads {@code /..;/};
 * </ol>
 *
 * <p>and {@link #decoded()}, what rules match, is that path without parameters, its escapes decoded as UTF-8. Paths
 * that servers read in different ways are refused rather than guessed at: a backslash or {@code %5C} and an encoded
 * slash ({@code %2F}) unless {@link PathSettings} says what they are, {@code %00}, a malformed escape, bytes that are
 * not UTF-8 (an overlong form among them), a character outside printable ASCII, a {@code #}, and {@code ..} above the
 * root.
 *
 * <p>Immutable and thread-safe.
 */
public final class NormalPath {

    /** How much of a client's path an error message shows. */
    private static final int SHOWN_CHARACTERS = 200;

    private final String encoded;
    private final String decoded;

    private NormalPath(String encoded, String decoded) {
        this.encoded = encoded;
        this.decoded = decoded;
    }

    /**
     * Reads {@code rawPath}, the path of a request target as sent (escapes and all, without the query).
     *
     * @throws IllegalArgumentException naming what is wrong, for a path that does not start with {@code /} or is
     *     one of those this class refuses
     * @throws NullPointerException if an argument is null
     */
    public static NormalPath parse(String rawPath, PathSettings settings) {
        Objects.requireNonNull(rawPath, "rawPath");
        Objects.requireNonNull(settings, "settings");
        if (!rawPath.startsWith("/")) {
            throw new IllegalArgumentException("a path must start with '/', was '" + shown(rawPath) + "'");
        }
        if (isNormalAsSent(rawPath)) {
            return new NormalPath(rawPath, rawPath);
        }
        List<String> segments = removeDotSegments(segments(rawPath, settings), rawPath, settings);
        StringBuilder encoded = new StringBuilder(rawPath.length());
        StringBuilder decoded = new StringBuilder(rawPath.length());
        for (int i = 0; i < segments.size(); i++) {
            String segment = segments.get(i);
            encoded.append('/').append(segment);
            String name = decode(name(segment), rawPath);
            if (!name.isEmpty() || i == segments.size() - 1) { // /a/;x/b is /a/b to a server that drops parameters
                decoded.append('/').append(name);
            }
        }
        return new NormalPath(encoded.toString(), decoded.toString());
    }

    /**
     * Returns the normal form as a URI path, escapes kept: what the proxy forwards, such as {@code /api/caf%C3%A9}
     * (and {@code /api/caf%C3%A9;v=2} where parameters are kept).
     */
    public String encoded() {
        return encoded;
    }

    /**
     * Returns the normal form as rules match it: each segment without its {@code ;parameters}, decoded, such as
     * {@code /api/café}. An encoded slash that {@link PathSettings.EncodedSlash#KEEP} keeps stays {@code %2F}.
     */
    public String decoded() {
        return decoded;
    }

    /** Two paths are equal when their normal forms are. */
    @Override
    public boolean equals(Object other) {
        return other instanceof NormalPath that && encoded.equals(that.encoded);
    }

    @Override
    public int hashCode() {
        return encoded.hashCode();
    }

    /** Returns the encoded normal form. */
    @Override
    public String toString() {
        return encoded;
    }

    /**
     * Whether the path is already normal and its two forms the same: only characters that stand for themselves, no
     * parameters, no empty or dot segments. Most paths are, and take no more than this one pass.
     */
    private static boolean isNormalAsSent(String path) {
        int segmentStart = 1;
        for (int i = 1; i <= path.length(); i++) {
            char c = i < path.length() ? path.charAt(i) : '/';
            if (c == '/') {
                int length = i - segmentStart;
                boolean last = i == path.length();
                if ((length == 0 && !last)
                        || (length == 1 && path.charAt(segmentStart) == '.')
                        || (length == 2 && path.startsWith("..", segmentStart))) {
                    return false;
                }
                segmentStart = i + 1;
            } else if (c == ';' || !isPathCharacter(c)) {
                return false;
            }
        }
        return true;
    }

    /** Splits the path into segments, each in normal encoding; refuses what cannot be read one way only. */
    private static List<String> segments(String path, PathSettings settings) {
        List<String> segments = new ArrayList<>();
        StringBuilder segment = new StringBuilder();
        for (int i = 1; i < path.length(); i++) {
            char c = path.charAt(i);
            int escaped = -1;
            if (c == '%') {
                escaped = escapedByte(path, i);
                i += 2;
            }
            if (c == '/' || c == '\\' || escaped == '\\') {
                if (c != '/' && settings.backslash() == PathSettings.Backslash.REFUSE) {
                    throw new IllegalArgumentException("ambiguous path: a backslash in '" + shown(path)
                            + "', which some servers read as '/' and others not (see paths.backslash)");
                }
                segments.add(segment.toString());
                segment.setLength(0);
            } else if (escaped == '/') {
                if (settings.encodedSlash() == PathSettings.EncodedSlash.REFUSE) {
                    throw new IllegalArgumentException("ambiguous path: an encoded '/' (%2F) in '" + shown(path)
                            + "', which some servers decode before routing and others not (see paths.encoded-slash)");
                }
                segment.append("%2F");
            } else if (escaped == 0) {
                throw new IllegalArgumentException(
                        "the path '" + shown(path) + "' holds %00, which some servers read as its end");
            } else if (escaped >= 0) {
                if (isUnreserved(escaped)) {
                    segment.append((char) escaped);
                } else {
                    appendEscape(segment, escaped);
                }
            } else if (c <= ' ' || c >= 0x7f) {
                throw new IllegalArgumentException(String.format(
                        "the path '%s' holds the character U+%04X, which a URI sends percent-encoded as UTF-8",
                        shown(path), (int) c));
            } else if (c == '#') {
                throw new IllegalArgumentException(
                        "the path '" + shown(path) + "' holds '#', which starts a fragment and is never sent");
            } else if (isPathCharacter(c)) {
                segment.append(c);
            } else {
                appendEscape(segment, c);
            }
        }
        segments.add(segment.toString());
        return segments;
    }

    /** Drops empty segments but a last one (a trailing slash), and resolves {@code .} and {@code ..}. */
    private static List<String> removeDotSegments(List<String> segments, String path, PathSettings settings) {
        List<String> kept = new ArrayList<>(segments.size());
        for (int i = 0; i < segments.size(); i++) {
            String segment = segments.get(i);
            boolean last = i == segments.size() - 1;
            String name = name(segment);
            if (settings.parameters() == PathSettings.Parameters.DROP && !segment.equals(name)) {
                if (name.isEmpty() && !last) {
                    continue; // /a/;x/b is /a/b
                }
                segment = name;
            }
            if (segment.isEmpty() && !last) {
                if (!settings.mergeSlashes()) {
                    throw new IllegalArgumentException("the path '" + shown(path)
                            + "' has an empty segment (//), and paths.merge-slashes is false");
                }
            } else if (name.equals(".") || name.equals("..")) {
                if (name.equals("..")) {
                    if (kept.isEmpty()) {
                        throw new IllegalArgumentException("the path '" + shown(path) + "' climbs above the root");
                    }
                    kept.remove(kept.size() - 1);
                }
                if (last) {
                    kept.add(""); // /a/b/.. is /a/, as a directory
                }
            } else {
                kept.add(segment);
            }
        }
        return kept;
    }

    /** The segment without its parameters: what comes before its first {@code ;}. */
    private static String name(String segment) {
        int semicolon = segment.indexOf(';');
        return semicolon < 0 ? segment : segment.substring(0, semicolon);
    }

    /** Decodes a segment in normal encoding as UTF-8; an encoded slash that is kept stays encoded. */
    private static String decode(String segment, String path) {
        if (segment.indexOf('%') < 0) {
            return segment;
        }
        ByteBuffer bytes = ByteBuffer.allocate(segment.length());
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c == '%' && !segment.startsWith("%2F", i)) {
                bytes.put((byte) escapedByte(segment, i));
                i += 2;
            } else {
                bytes.put((byte) c); // ASCII: segments in normal encoding hold nothing else
            }
        }
        bytes.flip();
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(bytes)
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("the path '" + shown(path)
                    + "' holds escapes that are not UTF-8 (such as an overlong form), which servers decode apart");
        }
    }

    /** Returns the byte that the escape at {@code at} stands for. */
    private static int escapedByte(String text, int at) {
        int high = at + 2 < text.length() ? Character.digit(text.charAt(at + 1), 16) : -1;
        int low = high < 0 ? -1 : Character.digit(text.charAt(at + 2), 16);
        if (low < 0) {
            throw new IllegalArgumentException("a malformed escape in the path at '" + shown(text.substring(at))
                    + "': a % is followed by two hexadecimal digits");
        }
        return high * 16 + low;
    }

    private static void appendEscape(StringBuilder segment, int value) {
        segment.append('%')
                .append(Character.toUpperCase(Character.forDigit(value >> 4, 16)))
                .append(Character.toUpperCase(Character.forDigit(value & 0xf, 16)));
    }

    /** Unreserved characters of RFC 3986: a URI means the same whether they are escaped or not. */
    private static boolean isUnreserved(int c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '-'
                || c == '.'
                || c == '_'
                || c == '~';
    }

    /** Characters that a path segment holds unescaped (RFC 3986 pchar): unreserved, sub-delims, ':' and '@'. */
    private static boolean isPathCharacter(char c) {
        return isUnreserved(c) || "!$&'()*+,;=:@".indexOf(c) >= 0;
    }

    private static String shown(String path) {
        return path.length() <= SHOWN_CHARACTERS ? path : path.substring(0, SHOWN_CHARACTERS) + "...";
    }
}
