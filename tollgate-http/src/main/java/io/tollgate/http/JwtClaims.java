package io.tollgate.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Reads one top-level claim of a JWT's payload, without verifying the token: for choosing a policy, never for
 * deciding who the caller is. Anything that is not a well-formed bearer JWT whose claim is a string or a
 * number gives null.
 */
final class JwtClaims {

    /** Longer tokens are not decoded: a limiter must not spend its time on a client's huge header. */
    static final int MAX_TOKEN_LENGTH = 8 * 1024;

    private JwtClaims() {}

    /** Returns the claim's value in {@code Authorization: Bearer TOKEN}, or null. */
    static String claim(String authorization, String claim) {
        if (authorization == null
                || authorization.length() > MAX_TOKEN_LENGTH
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        String token = authorization.substring(7).strip();
        int first = token.indexOf('.');
        int second = first < 0 ? -1 : token.indexOf('.', first + 1);
        if (second < 0) {
            return null;
        }
        String payload;
        try {
            payload = new String(
                    Base64.getUrlDecoder().decode(token.substring(first + 1, second)), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
        return new Scanner(payload).topLevel(claim);
    }

    /** A reader of just enough JSON to find one member of the top-level object. */
    private static final class Scanner {
        private final String text;
        private int at;

        Scanner(String text) {
            this.text = text;
        }

        String topLevel(String name) {
            try {
                skipSpace();
                expect('{');
                skipSpace();
                if (peek() == '}') {
                    return null;
                }
                while (true) {
                    skipSpace();
                    String member = string();
                    skipSpace();
                    expect(':');
                    skipSpace();
                    if (member.equals(name)) {
                        char c = peek();
                        if (c == '"') {
                            return string();
                        }
                        int start = at;
                        skipValue();
                        String number = text.substring(start, at);
                        return number.matches("-?[0-9][0-9.eE+-]*") ? number : null;
                    }
                    skipValue();
                    skipSpace();
                    if (peek() == ',') {
                        at++;
                        continue;
                    }
                    expect('}');
                    return null;
                }
            } catch (IndexOutOfBoundsException | IllegalStateException | IllegalArgumentException e) {
                return null; // not JSON: no claim
            }
        }

        private void skipValue() {
            char c = peek();
            if (c == '"') {
                string();
            } else if (c == '{' || c == '[') {
                int depth = 0;
                do {
                    char d = text.charAt(at);
                    if (d == '"') {
                        string();
                        continue;
                    }
                    if (d == '{' || d == '[') {
                        depth++;
                    } else if (d == '}' || d == ']') {
                        depth--;
                    }
                    at++;
                } while (depth > 0);
            } else {
                while (at < text.length() && ",}] \t\r\n".indexOf(text.charAt(at)) < 0) {
                    at++;
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder value = new StringBuilder();
            while (true) {
                char c = text.charAt(at++);
                if (c == '"') {
                    return value.toString();
                }
                if (c != '\\') {
                    value.append(c);
                    continue;
                }
                char escaped = text.charAt(at++);
                switch (escaped) {
                    case 'n' -> value.append('\n');
                    case 't' -> value.append('\t');
                    case 'r' -> value.append('\r');
                    case 'b' -> value.append('\b');
                    case 'f' -> value.append('\f');
                    case 'u' -> {
                        value.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> value.append(escaped);
                }
            }
        }

        private char peek() {
            return text.charAt(at);
        }

        private void expect(char c) {
            if (text.charAt(at) != c) {
                throw new IllegalStateException("expected " + c);
            }
            at++;
        }

        private void skipSpace() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }
    }
}
