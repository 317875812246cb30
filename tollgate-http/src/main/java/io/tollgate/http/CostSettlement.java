package io.tollgate.http;

import io.tollgate.RateLimiter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Settles what requests cost once their responses are known: charges the cost beyond what a rule took when
 * deciding, or refunds what it took too much ({@link ResponseCost}). A store that cannot be asked loses the
 * difference (the cost taken when deciding stays), which is logged and counted.
 *
 * <p>Immutable and thread-safe.
 */
final class CostSettlement {

    private static final System.Logger LOG = System.getLogger(RequestLimiter.class.getName());

    private final RateLimiter limiter;
    private final RequestMetrics metrics;

    CostSettlement(RateLimiter limiter, RequestMetrics metrics) {
        this.limiter = limiter;
        this.metrics = metrics;
    }

    /** See {@link RequestLimiter#settle}. */
    CompletionStage<Void> settle(RequestDecision decision, int status, Function<String, String> responseHeader) {
        List<CompletableFuture<?>> pending = new ArrayList<>();
        for (RuleOutcome outcome : decision.outcomes()) {
            if (!outcome.settlesAfterResponse()) {
                continue;
            }
            long taken = outcome.rule().cost();
            long difference = outcome.rule().responseCost().finalCost(taken, status, responseHeader) - taken;
            if (difference != 0) {
                pending.add(settle(outcome, difference));
            }
        }
        return pending.isEmpty()
                ? CompletableFuture.completedFuture(null)
                : CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }

    /** Charges a positive difference or refunds a negative one; the stage never fails. */
    private CompletableFuture<?> settle(RuleOutcome outcome, long difference) {
        CompletableFuture<?> settled;
        try {
            settled = (difference > 0
                            ? limiter.chargeAsync(outcome.key(), outcome.policy(), difference)
                            : limiter.refundAsync(outcome.key(), outcome.policy(), -difference))
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            settled = CompletableFuture.failedFuture(e);
        }
        return settled.handle((done, failure) -> {
            metrics.settled(outcome, difference, failure == null);
            if (failure != null) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        () -> "Tollgate: could not " + (difference > 0 ? "charge " : "refund ")
                                + Math.abs(difference)
                                + " tokens of policy '" + outcome.policy().name() + "' after the response: "
                                + (failure.getCause() == null ? failure : failure.getCause()));
            }
            return null;
        });
    }
}
