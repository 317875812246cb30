package io.tollgate.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict reader of the RFC 9651 Structured Field Lists that the rate-limit fields use: members are Items
 * whose bare item is a String, with Integer parameters. Anything else, or anything the RFC forbids (a key
 * that is not lower-case, an Integer of more than 15 digits, a stray character), is an error. Test code: it
 * checks what Tollgate writes against the grammar rather than against a copy of Tollgate's own output.
 */
final class StructuredFieldList {

    /** One member: its String value and its parameters, in order. */
    record Item(String value, Map<String, Long> parameters) {}

    private final String text;
    private int at;

    private StructuredFieldList(String text) {
        this.text = text;
    }

    static List<Item> parse(String text) {
        return new StructuredFieldList(text).list();
    }

    private List<Item> list() {
        List<Item> items = new ArrayList<>();
        skip(' ');
        while (true) {
            items.add(item());
            skipOws();
            if (at == text.length()) {
                return items;
            }
            expect(',');
            skipOws();
            if (at == text.length()) {
                throw error("trailing comma");
            }
        }
    }

    private Item item() {
        String value = string();
        Map<String, Long> parameters = new LinkedHashMap<>();
        while (at < text.length() && text.charAt(at) == ';') {
            at++;
            skip(' ');
            String key = key();
            expect('=');
            if (parameters.put(key, integer()) != null) {
                throw error("duplicate parameter " + key);
            }
        }
        return new Item(value, parameters);
    }

    private String string() {
        expect('"');
        StringBuilder value = new StringBuilder();
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') {
                return value.toString();
            }
            if (c == '\\') {
                char escaped = text.charAt(at++);
                if (escaped != '"' && escaped != '\\') {
                    throw error("bad escape");
                }
                value.append(escaped);
            } else if (c < 0x20 || c > 0x7e) {
                throw error("character outside printable ASCII");
            } else {
                value.append(c);
            }
        }
        throw error("unterminated string");
    }

    private String key() {
        int start = at;
        if (at >= text.length() || !(Character.isLowerCase(text.charAt(at)) || text.charAt(at) == '*')) {
            throw error("a key starts with a lower-case letter or '*'");
        }
        while (at < text.length() && "abcdefghijklmnopqrstuvwxyz0123456789_-.*".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        return text.substring(start, at);
    }

    private long integer() {
        int start = at;
        if (at < text.length() && text.charAt(at) == '-') {
            at++;
        }
        while (at < text.length() && Character.isDigit(text.charAt(at))) {
            at++;
        }
        String digits = text.substring(start, at).replace("-", "");
        if (digits.isEmpty() || digits.length() > 15) {
            throw error("an Integer has 1 to 15 digits");
        }
        return Long.parseLong(text.substring(start, at));
    }

    private void expect(char c) {
        if (at >= text.length() || text.charAt(at) != c) {
            throw error("expected '" + c + "'");
        }
        at++;
    }

    private void skip(char c) {
        while (at < text.length() && text.charAt(at) == c) {
            at++;
        }
    }

    private void skipOws() {
        while (at < text.length() && (text.charAt(at) == ' ' || text.charAt(at) == '\t')) {
            at++;
        }
    }

    private IllegalArgumentException error(String problem) {
        return new IllegalArgumentException(problem + " at " + at + " in: " + text);
    }
}
