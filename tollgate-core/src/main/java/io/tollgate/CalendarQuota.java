package io.tollgate;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.Locale;
import java.util.Objects;

/**
 * A limit that resets at calendar boundaries: at most {@code count} tokens per hour, day, week or month as
 * a clock in {@code zone} shows them, such as 1 000 requests a month that start again at midnight on the
 * first, Paris time. Unlike a token bucket it does not refill as time passes: the whole count comes back at
 * once when the next period begins, and not before.
 *
 * <p>A {@link Policy} holds calendar quotas beside its token bucket limits, and a request passes only if
 * every limit and every quota has room for its cost; all are charged together or none is. Days and months
 * are as long as the calendar says: a day on which daylight saving time starts has 23 hours, one on which
 * it ends 25, and an hour that a clock shows twice is two periods. Weeks start on Monday.
 *
 * <p>Immutable and thread-safe.
 *
 * @param count the tokens each period allows, 1 to 2^52
 * @param period the calendar period
 * @param zone the time zone whose clock sets the boundaries
 */
public record CalendarQuota(long count, Period period, ZoneId zone) {

    /** The calendar periods a quota may count over. */
    public enum Period {
        /** From one full hour of the zone's clock to the next. */
        HOUR(3_600),
        /** From midnight to midnight (or to the first moment of the day, where a zone skips midnight). */
        DAY(86_400),
        /** From Monday's start to the next Monday's. */
        WEEK(604_800),
        /** From the first day's start to the next month's. */
        MONTH(2_592_000);

        private final long nominalSeconds;

        Period(long nominalSeconds) {
            this.nominalSeconds = nominalSeconds;
        }

        /**
         * Returns the period's nominal length in seconds, as the {@code w} of the {@code RateLimit-Policy}
         * field reports it: an hour, a day, 7 days, 30 days.
         */
        public long nominalSeconds() {
            return nominalSeconds;
        }

        /**
         * Parses {@code hour}, {@code day}, {@code week} or {@code month}, in any case.
         *
         * @throws IllegalArgumentException if the text is none of these, naming it
         */
        public static Period parse(String text) {
            try {
                return valueOf(Objects.requireNonNull(text, "text").strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "invalid calendar period '" + text + "': use hour, day, week or month", e);
            }
        }
    }

    /** The largest count: the arithmetic of every store counts up to 2^53 exactly. */
    public static final long MAX_COUNT = 1L << 52;

    /**
     * Validates the quota.
     *
     * @throws IllegalArgumentException if the count is out of range, naming it
     * @throws NullPointerException if the period or zone is null
     */
    public CalendarQuota {
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(zone, "zone");
        if (count < 1 || count > MAX_COUNT) {
            throw new IllegalArgumentException("a calendar quota's count must be 1 to 2^52, was " + count);
        }
    }

    /**
     * Returns a quota of {@code count} per {@code period} in {@code zone}.
     *
     * @throws IllegalArgumentException if the count is out of range
     * @throws NullPointerException if the period or zone is null
     */
    public static CalendarQuota of(long count, Period period, ZoneId zone) {
        return new CalendarQuota(count, period, zone);
    }

    /** Returns the start of the period that holds the moment {@code nowMicros}, in µs since the epoch. */
    public long periodStartMicros(long nowMicros) {
        ZonedDateTime now = at(nowMicros);
        ZonedDateTime start = switch (period) {
            case HOUR -> now.truncatedTo(ChronoUnit.HOURS);
            case DAY -> now.toLocalDate().atStartOfDay(zone);
            case WEEK ->
                now.toLocalDate()
                        .with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY))
                        .atStartOfDay(zone);
            case MONTH -> now.toLocalDate().withDayOfMonth(1).atStartOfDay(zone);
        };
        return micros(start);
    }

    /** Returns the start of the period after the one that holds {@code nowMicros}, in µs since the epoch. */
    public long nextStartMicros(long nowMicros) {
        ZonedDateTime start = at(periodStartMicros(nowMicros));
        ZonedDateTime next = switch (period) {
            case HOUR -> start.plusHours(1); // on the timeline: an hour shown twice is two periods
            case DAY -> start.toLocalDate().plusDays(1).atStartOfDay(zone);
            case WEEK -> start.toLocalDate().plusWeeks(1).atStartOfDay(zone);
            case MONTH -> start.toLocalDate().plusMonths(1).atStartOfDay(zone);
        };
        return micros(next);
    }

    /**
     * Returns the limit a quota is reported as in a {@link Decision} and in rate-limit header fields: a
     * capacity of {@code count}, refilled at {@code count} per nominal period.
     */
    public Limit reportedLimit() {
        try {
            return Limit.of(count, Rate.of(count, Duration.ofSeconds(period.nominalSeconds())));
        } catch (IllegalArgumentException e) {
            // A count whose rate over the period a bucket could not count exactly: only the capacity matters, and
            // any rate a bucket counts will do; not above one token a microsecond, the fastest rate there is
            return Limit.of(count, Rate.perSecond(Math.min(count, 1_000_000)));
        }
    }

    private ZonedDateTime at(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L)
                .atZone(zone);
    }

    private static long micros(ZonedDateTime time) {
        Instant instant = time.toInstant();
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000);
    }

    @Override
    public String toString() {
        return count + "/" + period.name().toLowerCase(Locale.ROOT) + " in " + zone;
    }
}
