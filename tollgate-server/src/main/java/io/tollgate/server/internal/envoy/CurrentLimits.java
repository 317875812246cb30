package io.tollgate.server.internal.envoy;

import io.tollgate.Limit;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Match;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.RateLimit;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.RateLimit.Unit;
import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Writes a descriptor's {@code current_limit}: a {@code rate_limit} of the file as the file says it; a
 * Tollgate policy's limit as its refill rate in the smallest of Envoy's units that counts it in whole
 * requests (10 per second, 90 per minute), named after the policy. A rate no unit counts whole (1 per
 * 7 seconds) has none.
 */
final class CurrentLimits {

    private record Span(Unit unit, Duration length) {}

    /** Envoy's units from the smallest, as envoyproxy/ratelimit measures them. */
    private static final List<Span> UNITS = List.of(
            new Span(Unit.SECOND, Duration.ofSeconds(1)),
            new Span(Unit.MINUTE, Duration.ofMinutes(1)),
            new Span(Unit.HOUR, Duration.ofHours(1)),
            new Span(Unit.DAY, Duration.ofDays(1)),
            new Span(Unit.WEEK, Duration.ofDays(7)),
            new Span(Unit.MONTH, Duration.ofDays(30)),
            new Span(Unit.YEAR, Duration.ofDays(365)));

    private static final BigInteger MAX_UINT32 = BigInteger.valueOf(0xFFFF_FFFFL);

    private CurrentLimits() {}

    /**
     * Returns the current limit of a descriptor that matched {@code match} and was decided by {@code limit}
     * (null for a descriptor without a bucket).
     */
    static Optional<RateLimit> of(Match match, Limit limit) {
        if (match.unit() != null) {
            RateLimit.Builder current = RateLimit.newBuilder()
                    .setRequestsPerUnit((int) Math.min(match.requestsPerUnit(), 0xFFFF_FFFFL))
                    .setUnit(Unit.valueOf(match.unit()));
            if (match.name() != null) {
                current.setName(match.name());
            }
            return Optional.of(current.build());
        }
        BigInteger tokens = BigInteger.valueOf(limit.refill().tokens());
        BigInteger period = BigInteger.valueOf(limit.refill().period().toNanos());
        for (Span span : UNITS) {
            BigInteger[] perSpan =
                    tokens.multiply(BigInteger.valueOf(span.length().toNanos())).divideAndRemainder(period);
            if (perSpan[1].signum() == 0 && perSpan[0].compareTo(MAX_UINT32) <= 0) {
                return Optional.of(RateLimit.newBuilder()
                        .setName(match.policy().name())
                        .setRequestsPerUnit(perSpan[0].intValue())
                        .setUnit(span.unit())
                        .build());
            }
        }
        return Optional.empty();
    }
}
