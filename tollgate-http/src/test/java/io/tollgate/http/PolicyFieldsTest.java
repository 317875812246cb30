package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import org.junit.jupiter.api.Test;

class PolicyFieldsTest {

    @Test
    void answersWhatTheFieldIsBuiltFromEachTime() {
        PolicyFields fields = new PolicyFields();
        Policy twoLimits = Policy.of("api", Limit.of(10, Rate.perSecond(10)), Limit.of(1_000, Rate.perHour(1_000)));

        assertThat(fields.of(twoLimits)).isEqualTo(RateLimitFields.policy(twoLimits));
        assertThat(fields.of(twoLimits)).isEqualTo(RateLimitFields.policy(twoLimits));
        assertThat(fields.size()).isEqualTo(1);
    }

    @Test
    void keepsAPolicyOfTheSameNameButOtherLimitsApart() {
        PolicyFields fields = new PolicyFields();
        Policy before = Policy.of("api", Limit.of(10, Rate.perSecond(10)));
        Policy reloaded = Policy.of("api", Limit.of(20, Rate.perSecond(20)));

        fields.of(before);

        assertThat(fields.of(reloaded))
                .isEqualTo(RateLimitFields.policy(reloaded))
                .contains("q=20");
    }

    @Test
    void keepsAtMostTheBoundButStillAnswersBeyondIt() {
        PolicyFields fields = new PolicyFields();
        for (int i = 0; i < PolicyFields.MOST + 10; i++) {
            Policy policy = Policy.of("p" + i, Limit.of(i + 1, Rate.perSecond(i + 1)));

            assertThat(fields.of(policy)).isEqualTo(RateLimitFields.policy(policy));
        }

        assertThat(fields.size()).isEqualTo(PolicyFields.MOST);
    }
}
