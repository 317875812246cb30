package io.tollgate.server;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The {@code Date} header field's value (RFC 9110, IMF-fixdate), formatted once a second rather than once an
 * answer: formatting it took about a twentieth of a {@code /healthz} answer's time. Thread-safe.
 */
final class HttpDate {

    private static final DateTimeFormatter IMF_FIXDATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);

    /** The second and its text, replaced together. */
    private record Second(long epochSecond, String text) {}

    private static volatile Second current = new Second(-1, "");

    private HttpDate() {}

    /** Returns now as an HTTP date, such as {@code Fri, 04 Dec 2026 17:10:00 GMT}. */
    static String now() {
        long millis = System.currentTimeMillis();
        long second = Math.floorDiv(millis, 1_000);
        Second cached = current;
        if (cached.epochSecond() != second) {
            cached = new Second(second, IMF_FIXDATE.format(Instant.ofEpochSecond(second)));
            current = cached;
        }
        return cached.text();
    }
}
