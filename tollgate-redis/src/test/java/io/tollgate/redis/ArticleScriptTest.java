package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.internal.TokenBucketScript;
import io.tollgate.testing.RedisErrorReply;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Regression tests for the defects of the hand-written Lua token bucket that Tollgate started from (see
 * docs/redis.md). The scripts below are minimal reconstructions of each defect, written for this test,
 * run on real Redis beside Tollgate's script doing the same job.
 */
@Isolated // its bounds on time need the machine to itself
class ArticleScriptTest {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Policy POLICY = Policy.of("article", Limit.of(10, Rate.perSecond(5)));

    @BeforeEach
    void flush() {
        redis.server().command("FLUSHALL");
    }

    /** Assigning a variable without {@code local} on the new-key path, as the article's script does. */
    @Test
    void aScriptThatAssignsAGlobalFailsOnEveryNewKeyWhileTollgatesPasses() {
        String globalOnNewKey = "local tokens = redis.call('HGET', KEYS[1], 'tokens') "
                + "if not tokens then tokens = ARGV[1]; last_refill = ARGV[2] end "
                + "redis.call('HSET', KEYS[1], 'tokens', tokens) return 1";

        assertThatThrownBy(() -> redis.server().command("EVAL", globalOnNewKey, "1", "bucket:new", "10", "0"))
                .isInstanceOf(RedisErrorReply.class)
                .satisfies(e -> assertThat(e.getMessage()).containsAnyOf("global", "readonly table"));
        try (RedisRateLimiter limiter = limiter(redis.server())) {
            assertThat(limiter.tryAcquire("new-key", POLICY).allowed()).isTrue();
        }
    }

    /** Returning fractional tokens as a Lua number: Redis truncates it to an integer. */
    @Test
    void fractionalTokensAreTruncatedInARedisReplyWhileTollgateCountsInIntegers() {
        Object reply = redis.server().command("EVAL", "return {1, 9.5}", "0");

        assertThat(reply).isEqualTo(List.of(1L, 9L));
    }

    /** The caller's clock: an instance whose clock runs ahead refills the shared bucket early. */
    @Test
    void theCallersClockIsNotUsedByDefault() {
        try (RedisRateLimiter limiter = limiter(redis.server())) {
            limiter.tryAcquire("alice", POLICY);

            String bucket = (String) redis.server().command("GET", "tollgate:article:alice");
            long time = Long.parseLong(bucket.substring(0, bucket.indexOf('|')));

            assertThat(Math.abs(time - redis.server().timeMicros()))
                    .as("the bucket's time comes from Redis TIME")
                    .isLessThan(5_000_000L);
        }
    }

    /** No retry-after in the reply: a refused client cannot be told when to come back. */
    @Test
    void aRefusalCarriesAnExactRetryAfter() {
        try (RedisRateLimiter limiter = limiter(redis.server())) {
            limiter.tryAcquire("alice", POLICY, 10);

            Decision refused = limiter.tryAcquire("alice", POLICY);

            assertThat(refused.allowed()).isFalse();
            assertThat(refused.retryAfterMicros()).isBetween(1L, 200_000L);
        }
    }

    /** HMSET is deprecated; Tollgate's script writes its bucket with one SET ... PX, value and expiry at once. */
    @Test
    void theScriptUsesNoDeprecatedCommand() {
        String script = new TokenBucketScript().text();

        assertThat(script).doesNotContain("HMSET").doesNotContain("EXPIRE'").contains("'SET', key");
    }

    private static RedisRateLimiter limiter(RedisServer server) {
        return RedisRateLimiter.builder().timeout(PATIENT).uri(server.uri()).build();
    }
}
