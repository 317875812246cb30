package io.tollgate.server;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * The {@code Date} header field's value (RFC 9110, IMF-fixdate), formatted once a second rather than once an
 * answer: formatting it took about a twentieth of a {@code /healthz} answer's time. Thread-safe.
 */
final class HttpDate {

    /**
     * IMF-fixdate (RFC 9110 5.6.7): a two-digit day, English names, GMT. Not {@code RFC_1123_DATE_TIME}, which writes
     * the sixth of a month as {@code 6}.
     */
    private static final DateTimeFormatter IMF_FIXDATE = DateTimeFormatter.ofPattern(
                    "EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    /** The second and its text, replaced together. */
    private record Second(long epochSecond, String text) {}

    private static volatile Second current = new Second(-1, "");

    private HttpDate() {}

    /** Returns now as an HTTP date, such as {@code Fri, 04 Dec 2026 17:10:00 GMT}. */
    static String now() {
        return of(System.currentTimeMillis());
    }

    /** Returns the HTTP date of the second that holds {@code millis} after the epoch. */
    static String of(long millis) {
        long second = Math.floorDiv(millis, 1_000);
        Second cached = current;
        if (cached.epochSecond() != second) {
            cached = new Second(second, IMF_FIXDATE.format(Instant.ofEpochSecond(second)));
            current = cached;
        }
        return cached.text();
    }
}
