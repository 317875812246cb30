package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DegradationTest {

    @Test
    void failsClosedOnlyWhenTheFailurePolicyIsDeny() {
        assertThat(new Degradation(Degradation.Cause.TIMEOUT, FailurePolicy.DENY, "late").failsClosed())
                .isTrue();
        assertThat(new Degradation(Degradation.Cause.TIMEOUT, FailurePolicy.ALLOW, "late").failsClosed())
                .isFalse();
        assertThat(new Degradation(Degradation.Cause.UNREACHABLE, FailurePolicy.LOCAL, "down").failsClosed())
                .isFalse();
    }
}
