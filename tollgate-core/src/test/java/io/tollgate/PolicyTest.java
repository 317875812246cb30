package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PolicyTest {

    private static final Limit BURST = Limit.of(10, Rate.perSecond(5));
    private static final Limit QUOTA = Limit.of(1_000, Rate.perHour(1_000));

    @Test
    void keepsItsLimitsInOrder() {
        Policy policy = Policy.of("api", BURST, QUOTA);

        assertThat(policy.name()).isEqualTo("api");
        assertThat(policy.limits()).containsExactly(BURST, QUOTA);
    }

    @Test
    void copiesTheListItWasGiven() {
        List<Limit> limits = new ArrayList<>(List.of(BURST));
        Policy policy = new Policy("api", limits);

        limits.add(QUOTA);

        assertThat(policy.limits()).containsExactly(BURST);
        assertThatThrownBy(() -> policy.limits().add(QUOTA)).isInstanceOf(UnsupportedOperationException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "has space", "colon:name", "slash/name", "ünïcode", "quote\"name"})
    void rejectsANameThatIsNotSafeEverywhere(String name) {
        assertThatThrownBy(() -> Policy.of(name, BURST))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid policy name '" + name + "'");
    }

    @Test
    void rejectsANameLongerThan64Characters() {
        assertThat(Policy.of("a".repeat(64), BURST).name()).hasSize(64);
        assertThatThrownBy(() -> Policy.of("a".repeat(65), BURST)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rejectsAPolicyWithoutLimits() {
        assertThatThrownBy(() -> new Policy("api", List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("policy 'api' must have 1 to 8 limits, has 0");
    }

    @Test
    void rejectsMoreThanEightLimits() {
        assertThatThrownBy(() -> new Policy("api", Collections.nCopies(9, BURST)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has 9");
    }

    @Test
    void rejectsNulls() {
        assertThatThrownBy(() -> Policy.of(null, BURST)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Policy.of("api", null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Policy.of("api", BURST, (Limit) null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void maxCostIsTheSmallestCapacity() {
        assertThat(Policy.of("api", QUOTA, BURST).maxCost()).isEqualTo(10);
    }

    @Test
    void checkCostAcceptsOneUpToTheSmallestCapacity() {
        Policy policy = Policy.of("api", BURST, QUOTA);

        assertThat(policy.checkCost(1)).isEqualTo(1);
        assertThat(policy.checkCost(10)).isEqualTo(10);
    }

    @Test
    void checkCostRejectsZeroAndNegativeCosts() {
        Policy policy = Policy.of("api", BURST);

        assertThatThrownBy(() -> policy.checkCost(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cost must be at least 1, was 0");
        assertThatThrownBy(() -> policy.checkCost(-1)).hasMessage("cost must be at least 1, was -1");
    }

    @Test
    void checkCostRejectsACostThatCouldNeverPass() {
        Policy policy = Policy.of("api", QUOTA, BURST);

        assertThatThrownBy(() -> policy.checkCost(11))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "cost 11 exceeds the smallest capacity (10) of policy 'api': such a request could never pass");
    }
}
