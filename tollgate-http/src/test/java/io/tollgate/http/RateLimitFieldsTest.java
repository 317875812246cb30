package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RateLimitFieldsTest {

    private static final Policy PER_IP = Policy.of("per-ip", Limit.of(100, Rate.perMinute(100)));
    private static final Policy LAYERED =
            Policy.of("api", Limit.of(10, Rate.perSecond(10)), Limit.of(1_000, Rate.perHour(1_000)));

    @Test
    void writesTheDraftsExampleForATokenBucket() {
        // capacity 100 refilled 100 per minute: an empty bucket fills in 60 s
        RuleOutcome outcome = outcome(PER_IP, new Decision(true, PER_IP.limits().get(0), 0, 42, 0, 2_400_001));

        assertThat(RateLimitFields.policy(List.of(outcome))).isEqualTo("\"per-ip\";q=100;w=60");
        assertThat(RateLimitFields.rateLimit(List.of(outcome))).isEqualTo("\"per-ip\";r=42;t=3");
    }

    @Test
    void writesOneQuotaPolicyPerLimitAndReportsTheLimitThatDecided() {
        RuleOutcome outcome =
                outcome(LAYERED, new Decision(true, LAYERED.limits().get(1), 1, 7, 0, 3_000_000));

        assertThat(RateLimitFields.policy(List.of(outcome))).isEqualTo("\"api.0\";q=10;w=1, \"api.1\";q=1000;w=3600");
        assertThat(RateLimitFields.rateLimit(List.of(outcome))).isEqualTo("\"api.1\";r=7;t=3");
    }

    @Test
    void listsEachPolicyOnceAndEachRuleOnce() {
        RuleOutcome byIp = outcome(PER_IP, new Decision(true, PER_IP.limits().get(0), 0, 99, 0, 600_000));
        RuleOutcome byKey = outcome(LAYERED, new Decision(true, LAYERED.limits().get(0), 0, 9, 0, 100_000));

        assertThat(RateLimitFields.policy(List.of(byIp, byKey, byIp)).split(", "))
                .hasSize(3);
        assertThat(RateLimitFields.rateLimit(List.of(byIp, byKey))).isEqualTo("\"per-ip\";r=99;t=1, \"api.0\";r=9;t=1");
    }

    @Test
    void retryAfterIsWholeSecondsRoundedUpAndAtLeastOne() {
        Limit limit = PER_IP.limits().get(0);

        assertThat(RateLimitFields.retryAfterSeconds(new Decision(false, limit, 0, 0, 1, 1)))
                .isEqualTo(1);
        assertThat(RateLimitFields.retryAfterSeconds(new Decision(false, limit, 0, 0, 1_000_000, 1)))
                .isEqualTo(1);
        assertThat(RateLimitFields.retryAfterSeconds(new Decision(false, limit, 0, 0, 1_000_001, 1)))
                .isEqualTo(2);
    }

    @Test
    void theLegacyTrioReportsTheMostRestrictiveDecision() {
        RuleOutcome roomy = outcome(PER_IP, new Decision(true, PER_IP.limits().get(0), 0, 90, 0, 6_000_000));
        RuleOutcome tight = outcome(LAYERED, new Decision(true, LAYERED.limits().get(0), 0, 2, 0, 800_000));

        assertThat(RateLimitFields.legacy(List.of(roomy, tight)))
                .containsEntry("X-RateLimit-Limit", "10")
                .containsEntry("X-RateLimit-Remaining", "2")
                .containsEntry("X-RateLimit-Reset", "1");
    }

    @Test
    void theDraftsOwnExamplesAreValidStructuredFieldLists() {
        // the forms draft-ietf-httpapi-ratelimit-headers-10 shows: a reader that accepts these accepts ours
        assertThat(StructuredFieldList.parse("\"default\";q=100;w=10"))
                .containsExactly(new StructuredFieldList.Item("default", Map.of("q", 100L, "w", 10L)));
        assertThat(StructuredFieldList.parse("\"burst\";q=100;w=60,\"daily\";q=1000;w=86400"))
                .extracting(StructuredFieldList.Item::value)
                .containsExactly("burst", "daily");
        assertThat(StructuredFieldList.parse("\"default\";r=50;t=30"))
                .containsExactly(new StructuredFieldList.Item("default", Map.of("r", 50L, "t", 30L)));
    }

    @Test
    void whatItWritesIsAStructuredFieldListOfStringsWithIntegerParameters() {
        Policy dotted = Policy.of("tenant_a.v2-api", Limit.of(5, Rate.of(1, Duration.ofMillis(1500))));
        RuleOutcome layered =
                outcome(LAYERED, new Decision(false, LAYERED.limits().get(0), 0, 0, 99_000, 1_000_000));
        RuleOutcome odd = outcome(dotted, new Decision(true, dotted.limits().get(0), 0, 4, 0, 1_500_000));

        List<StructuredFieldList.Item> policy =
                StructuredFieldList.parse(RateLimitFields.policy(List.of(layered, odd)));
        List<StructuredFieldList.Item> state =
                StructuredFieldList.parse(RateLimitFields.rateLimit(List.of(layered, odd)));

        assertThat(policy)
                .containsExactly(
                        new StructuredFieldList.Item("api.0", Map.of("q", 10L, "w", 1L)),
                        new StructuredFieldList.Item("api.1", Map.of("q", 1000L, "w", 3600L)),
                        new StructuredFieldList.Item("tenant_a.v2-api", Map.of("q", 5L, "w", 8L)));
        assertThat(state)
                .containsExactly(
                        new StructuredFieldList.Item("api.0", Map.of("r", 0L, "t", 1L)),
                        new StructuredFieldList.Item("tenant_a.v2-api", Map.of("r", 4L, "t", 2L)));
    }

    @Test
    void aCapacityBeyondFifteenDigitsIsWrittenAsTheLargestStructuredInteger() {
        Policy huge = Policy.of("huge", Limit.of(4_000_000_000_000_000L, Rate.perSecond(1_000_000)));
        RuleOutcome outcome =
                outcome(huge, new Decision(true, huge.limits().get(0), 0, 3_999_999_999_999_999L, 0, 1_000_000));

        assertThat(StructuredFieldList.parse(RateLimitFields.policy(List.of(outcome))))
                .singleElement()
                .satisfies(item -> assertThat(item.parameters()).containsEntry("q", 999_999_999_999_999L));
        assertThat(StructuredFieldList.parse(RateLimitFields.rateLimit(List.of(outcome))))
                .singleElement()
                .satisfies(item -> assertThat(item.parameters()).containsEntry("r", 999_999_999_999_999L));
    }

    private static RuleOutcome outcome(Policy policy, Decision decision) {
        return new RuleOutcome(Rule.builder(policy).build(), "ip:203.0.113.7", decision);
    }
}
