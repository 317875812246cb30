package io.tollgate.http;

import java.util.List;

/** Writes RFC 9457 problem details ({@code application/problem+json}) without a JSON library. */
final class ProblemJson {

    static final String CONTENT_TYPE = "application/problem+json";

    private ProblemJson() {}

    /** Returns the JSON of a problem, with the names of the violated policies when there are any. */
    static String write(String type, int status, String detail, List<String> policies, Long retryAfterSeconds) {
        return write(type, title(status), status, detail, policies, retryAfterSeconds);
    }

    /** Returns the JSON of a problem with its own title, with the names of the policies when there are any. */
    static String write(
            String type, String title, int status, String detail, List<String> policies, Long retryAfterSeconds) {
        StringBuilder json = new StringBuilder(160);
        json.append("{\"type\":").append(quote(type));
        json.append(",\"title\":").append(quote(title));
        json.append(",\"status\":").append(status);
        json.append(",\"detail\":").append(quote(detail));
        if (!policies.isEmpty()) {
            json.append(",\"policies\":[");
            for (int i = 0; i < policies.size(); i++) {
                json.append(i == 0 ? "" : ",").append(quote(policies.get(i)));
            }
            json.append(']');
        }
        if (retryAfterSeconds != null) {
            json.append(",\"retry_after\":").append(retryAfterSeconds);
        }
        return json.append('}').toString();
    }

    /** Returns the reason phrase of a status, the title RFC 9457 recommends for {@code about:blank}. */
    static String title(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 402 -> "Payment Required";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 406 -> "Not Acceptable";
            case 408 -> "Request Timeout";
            case 409 -> "Conflict";
            case 410 -> "Gone";
            case 411 -> "Length Required";
            case 413 -> "Content Too Large";
            case 414 -> "URI Too Long";
            case 415 -> "Unsupported Media Type";
            case 420, 429 -> "Too Many Requests";
            case 422 -> "Unprocessable Content";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            default -> status >= 500 ? "Server Error" : "Client Error";
        };
    }

    static String quote(String text) {
        StringBuilder quoted = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                case '\n' -> quoted.append("\\n");
                case '\r' -> quoted.append("\\r");
                case '\t' -> quoted.append("\\t");
                default -> {
                    if (c < 0x20) {
                        quoted.append(String.format("\\u%04x", (int) c));
                    } else {
                        quoted.append(c);
                    }
                }
            }
        }
        return quoted.append('"').toString();
    }
}
