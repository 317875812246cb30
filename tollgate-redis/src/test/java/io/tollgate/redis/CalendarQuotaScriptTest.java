package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tollgate.CalendarQuota;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.internal.ScriptArguments;
import io.tollgate.redis.internal.TokenBucketScript;
import io.tollgate.testing.RedisExtension;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The script's calendar quotas on a real Redis, called as the limiter calls it but with the instance's idea
 * of now set apart from Redis's: Redis's own time picks the period, and clocks a period apart are refused.
 */
class CalendarQuotaScriptTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final long HOUR = 3_600_000_000L;

    private final Policy twoAnHour = Policy.of("hourly", Limit.of(100, Rate.perSecond(100)))
            .withQuota(CalendarQuota.of(2, CalendarQuota.Period.HOUR, ZoneId.of("UTC")));
    private final ScriptArguments arguments = new ScriptArguments(null);
    private final TokenBucketScript script = new TokenBucketScript();

    @BeforeEach
    void emptyRedis() {
        redis.server().command("FLUSHALL");
    }

    /** Runs one request of cost 1 for an instance that thinks it is {@code estimate}; returns the reply. */
    private List<Object> request(long estimateMicros) {
        byte[][] args = arguments.of(twoAnHour, 1, 0, estimateMicros);
        List<String> command = new ArrayList<>(List.of("EVAL", script.text(), "1", "tollgate:hourly:k"));
        for (byte[] arg : args) {
            command.add(new String(arg, StandardCharsets.US_ASCII));
        }
        @SuppressWarnings("unchecked")
        List<Object> reply = (List<Object>) redis.server().command(command.toArray(String[]::new));
        return reply;
    }

    private static long counted(List<Object> reply) {
        return Long.parseLong(String.valueOf(reply.get(2)));
    }

    @Test
    void redisTimePicksThePeriodWhateverTheInstancesClocksSay() {
        for (int attempt = 0; attempt < 3; attempt++) {
            redis.server().command("FLUSHALL");
            long redisNow = redis.server().timeMicros();
            long startOfHour = redisNow - Math.floorMod(redisNow, HOUR);

            // three instances: 50 minutes behind, on time, 50 minutes ahead: one period for all of them
            List<Long> counts = List.of(
                    counted(request(redisNow - 50 * 60_000_000L)),
                    counted(request(redisNow)),
                    counted(request(redisNow + 50 * 60_000_000L)));

            if (redis.server().timeMicros() - startOfHour < HOUR) { // else an hour began midway: again
                assertThat(counts).containsExactly(0L, 1L, 2L);
                return;
            }
        }
        throw new AssertionError("three requests straddled an hour three times running");
    }

    @Test
    void aKeyWithACountLivesUntilItsPeriodEnds() {
        long redisNow = redis.server().timeMicros();
        long untilNextHourMillis = (HOUR - Math.floorMod(redisNow, HOUR)) / 1_000;
        assumeTrue(untilNextHourMillis > 2_000, "the hour must not end between the request and the reading");

        request(redisNow);
        long ttl = (Long) redis.server().command("PTTL", "tollgate:hourly:k");

        // the bucket alone is full again within 10 ms; the count is kept for the rest of the hour
        assertThat(ttl).isBetween(untilNextHourMillis - 1_000, untilNextHourMillis);
    }

    @Test
    void clocksMoreThanAPeriodApartAreAnErrorNotAGuess() {
        List<Object> reply = request(redis.server().timeMicros() - 3 * HOUR);

        assertThat(reply.get(1)).isEqualTo(ScriptArguments.NOT_A_BUCKET);
        assertThat(String.valueOf(reply.get(2)))
                .contains("the time of Redis is outside the calendar periods Tollgate sent");
    }
}
