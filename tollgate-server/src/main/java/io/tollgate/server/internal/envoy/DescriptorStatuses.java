package io.tollgate.server.internal.envoy;

import com.google.protobuf.Duration;
import io.tollgate.Decision;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Match;
import io.tollgate.server.internal.envoy.RateLimitDecisions.Checked;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.Code;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.DescriptorStatus;

/** Writes the status of each descriptor of an answer to Envoy, as envoyproxy/ratelimit writes it. Stateless. */
final class DescriptorStatuses {

    private DescriptorStatuses() {}

    /**
     * The status of one descriptor: its own decision (a shadow one always {@code OK}), with the tokens it
     * holds once a refused request's charges are given back.
     */
    static DescriptorStatus of(Checked one, boolean refused) {
        DescriptorStatus.Builder status = DescriptorStatus.newBuilder();
        if (one.match() == null) {
            return status.setCode(Code.OK).build();
        }
        Match match = one.match();
        if (one.unlimited()) {
            // As envoyproxy/ratelimit answers one: no current limit, and all the requests a uint32 counts
            return status.setCode(Code.OK).setLimitRemaining(-1).build();
        }
        if (one.blocked()) {
            status.setCode(match.shadow() ? Code.OK : Code.OVER_LIMIT);
            CurrentLimits.of(match, null).ifPresent(status::setCurrentLimit);
            return status.build();
        }
        Decision decision = one.decision().join();
        status.setCode(decision.allowed() || match.shadow() ? Code.OK : Code.OVER_LIMIT);
        long remaining = decision.remaining();
        if (refused && decision.allowed() && !decision.degraded()) {
            remaining = Math.min(decision.limit().capacity(), remaining + one.cost());
        }
        status.setLimitRemaining((int) Math.min(remaining, 0xFFFF_FFFFL));
        status.setDurationUntilReset(duration(decision.resetAfterMicros()));
        CurrentLimits.of(match, decision.limit()).ifPresent(status::setCurrentLimit);
        return status.build();
    }

    private static Duration duration(long micros) {
        return Duration.newBuilder()
                .setSeconds(micros / 1_000_000)
                .setNanos((int) (micros % 1_000_000) * 1_000)
                .build();
    }
}
