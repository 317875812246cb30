package io.tollgate;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A refill rate: {@code tokens} added to a bucket over every {@code period}, spread evenly over it (a
 * bucket refilled at 10 per second gains one token every 100 ms, not ten at once).
 *
 * <p>Rates are exact rational numbers. Internally every backend counts time in <em>ticks</em> of
 * {@code 1 / ticksPerMicrosecond()} microseconds, chosen so that one token takes exactly {@link
 * #ticksPerToken()} ticks: all bucket arithmetic is then integer arithmetic, with no rounding and no drift
 * however long a bucket lives. For {@code 3 per second}, a tick is a third of a microsecond and a token
 * takes 1 000 000 ticks. Both numbers are in lowest terms, so two rates are {@linkplain #equals equal}
 * when they refill at the same speed ({@code 10/s} equals {@code 20 per 2s}).
 *
 * <p>A rate lies between one token per {@link Long#MAX_VALUE} microseconds and one token per microsecond
 * (10<sup>6</sup> per second); its period is a whole number of microseconds. Instances are immutable and
 * thread-safe.
 */
public final class Rate {

    private static final long MICROS_PER_SECOND = 1_000_000L;

    /**
     * Every unit {@link #parse} reads, as its errors and the docs (configuration.md, concepts.md) name them: one
     * list, written once.
     */
    static final String UNITS = "us, ms, s, m, h, d, or the words microsecond, millisecond, second, minute, hour,"
            + " day (also plural, and micro, milli, sec, min)";

    private static final Pattern SLASH_FORM = Pattern.compile("(\\d+)\\s*/\\s*(\\d+)?\\s*([a-z]+)");
    private static final Pattern PER_FORM = Pattern.compile("(\\d+)\\s+per\\s+(\\d+)?\\s*([a-z]+)");

    private final long tokens;
    private final Duration period;
    private final long ticksPerMicrosecond;
    private final long ticksPerToken;

    private Rate(long tokens, Duration period) {
        if (tokens < 1) {
            throw new IllegalArgumentException("rate tokens must be at least 1, was " + tokens);
        }
        Objects.requireNonNull(period, "period");
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("rate period must be positive, was " + period);
        }
        if (period.getNano() % 1_000 != 0) {
            throw new IllegalArgumentException("rate period must be a whole number of microseconds, was " + period);
        }
        long periodMicros;
        try {
            periodMicros =
                    Math.addExact(Math.multiplyExact(period.getSeconds(), MICROS_PER_SECOND), period.getNano() / 1_000);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("rate period is too long to count in microseconds: " + period);
        }
        if (tokens > periodMicros) {
            throw new IllegalArgumentException("rate " + tokens + " per " + format(periodMicros)
                    + " exceeds the maximum of one token per microsecond (1000000/s)");
        }
        long gcd = gcd(tokens, periodMicros);
        this.tokens = tokens;
        this.period = period;
        this.ticksPerMicrosecond = tokens / gcd;
        this.ticksPerToken = periodMicros / gcd;
    }

    /**
     * Returns the rate of {@code tokens} per {@code period}.
     *
     * @throws IllegalArgumentException if tokens is below 1, the period is not positive or not a whole
     *     number of microseconds, or the rate exceeds one token per microsecond
     * @throws NullPointerException if period is null
     */
    public static Rate of(long tokens, Duration period) {
        return new Rate(tokens, period);
    }

    /** Returns the rate of {@code tokens} per second; see {@link #of}. */
    public static Rate perSecond(long tokens) {
        return new Rate(tokens, Duration.ofSeconds(1));
    }

    /** Returns the rate of {@code tokens} per minute; see {@link #of}. */
    public static Rate perMinute(long tokens) {
        return new Rate(tokens, Duration.ofMinutes(1));
    }

    /** Returns the rate of {@code tokens} per hour; see {@link #of}. */
    public static Rate perHour(long tokens) {
        return new Rate(tokens, Duration.ofHours(1));
    }

    /** Returns the rate of {@code tokens} per day (24 hours); see {@link #of}. */
    public static Rate perDay(long tokens) {
        return new Rate(tokens, Duration.ofDays(1));
    }

    /**
     * Parses a rate written as {@code N/UNIT}, {@code N/AMOUNT UNIT} or {@code N per [AMOUNT] UNIT}, for
     * example {@code 5/s}, {@code 1000/d}, {@code 1/10s}, {@code 1 per 10s} or {@code 100 per minute}.
     * Units are {@value #UNITS}. Case and surrounding whitespace are ignored. {@link #toString()} gives back text that this method accepts.
     *
     * @throws IllegalArgumentException if the text is not a rate in this form, naming the text
     * @throws NullPointerException if text is null
     */
    public static Rate parse(String text) {
        Objects.requireNonNull(text, "text");
        String normalized = text.strip().toLowerCase(Locale.ROOT);
        Matcher matcher = SLASH_FORM.matcher(normalized);
        if (!matcher.matches()) {
            matcher = PER_FORM.matcher(normalized);
        }
        if (!matcher.matches()) {
            throw new IllegalArgumentException("invalid rate '" + text
                    + "': expected N/UNIT, N/AMOUNT UNIT or 'N per [AMOUNT] UNIT' such as 5/s, 1/10s or 100 per minute;"
                    + " units are " + UNITS);
        }
        long tokens = parseNumber(matcher.group(1), text);
        long amount = matcher.group(2) == null ? 1 : parseNumber(matcher.group(2), text);
        long unitMicros = unitMicros(matcher.group(3), text);
        long periodMicros;
        try {
            periodMicros = Math.multiplyExact(amount, unitMicros);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("invalid rate '" + text + "': period is too long");
        }
        try {
            return new Rate(
                    tokens,
                    Duration.ofSeconds(periodMicros / MICROS_PER_SECOND)
                            .plusNanos(periodMicros % MICROS_PER_SECOND * 1_000));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid rate '" + text + "': " + e.getMessage(), e);
        }
    }

    /** Returns how many tokens are added over one {@link #period()}. */
    public long tokens() {
        return tokens;
    }

    /** Returns the period over which {@link #tokens()} are added, a whole number of microseconds. */
    public Duration period() {
        return period;
    }

    /**
     * Returns N, the number of ticks in one microsecond: time in the exact arithmetic is counted in units
     * of 1/N µs. Always at least 1; in lowest terms with {@link #ticksPerToken()}. Backends that must
     * reproduce Tollgate's arithmetic (such as the Redis script) use this with {@link #ticksPerToken()}.
     */
    public long ticksPerMicrosecond() {
        return ticksPerMicrosecond;
    }

    /**
     * Returns P, the number of ticks it takes to add one token: one token every P/N microseconds. Always at
     * least {@link #ticksPerMicrosecond()}.
     */
    public long ticksPerToken() {
        return ticksPerToken;
    }

    /** Two rates are equal when they add tokens at exactly the same speed. */
    @Override
    public boolean equals(Object other) {
        return other instanceof Rate that
                && ticksPerMicrosecond == that.ticksPerMicrosecond
                && ticksPerToken == that.ticksPerToken;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(ticksPerMicrosecond) * 31 + Long.hashCode(ticksPerToken);
    }

    /** Returns this rate as {@link #parse} reads it, such as {@code 5/s} or {@code 1 per 10s}. */
    @Override
    public String toString() {
        long periodMicros = period.getSeconds() * MICROS_PER_SECOND + period.getNano() / 1_000;
        String formatted = format(periodMicros);
        return Character.isDigit(formatted.charAt(0)) ? tokens + " per " + formatted : tokens + "/" + formatted;
    }

    /** Formats a period in its largest exact unit; a single unit is written without the amount. */
    private static String format(long periodMicros) {
        String[] units = {"d", "h", "m", "s", "ms"};
        long[] sizes = {86_400_000_000L, 3_600_000_000L, 60_000_000L, MICROS_PER_SECOND, 1_000L};
        for (int i = 0; i < units.length; i++) {
            if (periodMicros % sizes[i] == 0) {
                long amount = periodMicros / sizes[i];
                return amount == 1 ? units[i] : amount + units[i];
            }
        }
        return periodMicros == 1 ? "us" : periodMicros + "us";
    }

    private static long parseNumber(String digits, String text) {
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid rate '" + text + "': " + digits + " is too large");
        }
    }

    private static long unitMicros(String unit, String text) {
        return switch (unit) {
            case "us", "micro", "micros", "microsecond", "microseconds" -> 1L;
            case "ms", "milli", "millis", "millisecond", "milliseconds" -> 1_000L;
            case "s", "sec", "second", "seconds" -> MICROS_PER_SECOND;
            case "m", "min", "minute", "minutes" -> 60 * MICROS_PER_SECOND;
            case "h", "hour", "hours" -> 3_600 * MICROS_PER_SECOND;
            case "d", "day", "days" -> 86_400 * MICROS_PER_SECOND;
            default ->
                throw new IllegalArgumentException(
                        "invalid rate '" + text + "': unknown unit '" + unit + "'; units are " + UNITS);
        };
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }
}
