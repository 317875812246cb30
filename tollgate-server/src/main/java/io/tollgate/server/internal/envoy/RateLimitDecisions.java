package io.tollgate.server.internal.envoy;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.LimiterArguments;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.http.RuleOutcome;
import io.tollgate.server.internal.access.Callers;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Entry;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Match;
import io.tollgate.server.internal.envoy.proto.HeaderValue;
import io.tollgate.server.internal.envoy.proto.RateLimitDescriptor;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.Code;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides one {@code ShouldRateLimit} request: matches each descriptor against the configuration, asks the
 * limiter for every matched one at once, and answers as Envoy expects. A request that any enforced
 * descriptor refuses is {@code OVER_LIMIT} and charges none: what the others took is given back. Thread-safe.
 */
final class RateLimitDecisions {

    /** Why a request cannot be decided: the message of an {@code INVALID_ARGUMENT} status. */
    static final class InvalidRequest extends Exception {
        private static final long serialVersionUID = 1L;

        InvalidRequest(String message) {
            super(message, null, false, false);
        }
    }

    /** A call whose caller may not ask for a limit its descriptors match; answered {@code PERMISSION_DENIED}. */
    static final class Forbidden extends Exception {
        private static final long serialVersionUID = 1L;

        Forbidden(String message) {
            super(message, null, false, false);
        }
    }

    /** The response header fields an Envoy answer may carry; the rest of a rendered refusal is for HTTP. */
    private static final Set<String> HEADERS = Set.of(
            "RateLimit-Policy",
            "RateLimit",
            "Retry-After",
            "X-RateLimit-Limit",
            "X-RateLimit-Remaining",
            "X-RateLimit-Reset",
            "Tollgate-Degraded");

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /** The most rules kept for reuse: the files' policies are few, overrides may name one per request. */
    private static final int MAX_CACHED_RULES = 1_024;

    private final RateLimiter limiter;
    private final EnvoyMetrics metrics;
    private final Map<Boolean, RequestLimiter> renderers;
    private final Map<RuleKey, Rule> rules = new ConcurrentHashMap<>();

    /** What a descriptor's rule, which renders its header fields, depends on. */
    private record RuleKey(Policy policy, boolean shadow) {}

    RateLimitDecisions(RateLimiter limiter, EnvoyMetrics metrics) {
        this.limiter = limiter;
        this.metrics = metrics;
        this.renderers = Map.of(
                false, renderer(limiter, false),
                true, renderer(limiter, true));
    }

    private static RequestLimiter renderer(RateLimiter limiter, boolean xRateLimitHeaders) {
        return RequestLimiter.builder(limiter)
                .legacyHeaders(xRateLimitHeaders)
                .degradedHeader(true)
                .build();
    }

    /**
     * One descriptor of the request: what it matched, if anything, and its decision once made (null without
     * a bucket: no match, a limit of 0 that refuses every request, or an unlimited one).
     */
    record Checked(Match match, long cost, CompletableFuture<Decision> decision) {

        boolean unlimited() {
            return match != null && match.unlimited();
        }

        boolean blocked() {
            return match != null && !match.unlimited() && match.policy() == null;
        }

        /** Whether it was decided by a bucket. */
        boolean bucketed() {
            return match != null && match.policy() != null;
        }

        boolean allowed() {
            return !bucketed() ? !blocked() : decision.join().allowed();
        }
    }

    /**
     * Decides {@code request} under {@code setup}. The stage completes with the answer, or exceptionally only
     * if the limiter itself fails (a bug).
     *
     * @throws InvalidRequest if the request has no domain, no descriptors, a descriptor without entries, an
     *     entry without a key, or an override Envoy does not define
     */
    CompletableFuture<RateLimitResponse> decide(RateLimitRequest request, EnvoyService.Setup setup)
            throws InvalidRequest {
        try {
            return decide(request, setup, null);
        } catch (Forbidden impossible) {
            throw new IllegalStateException(impossible); // no caller, nothing forbidden
        }
    }

    /**
     * Decides a call as {@link #decide(RateLimitRequest, EnvoyService.Setup)} does, for {@code caller}: every
     * limit its descriptors match must be one the caller may ask of (its policy, and its bucket's key, the domain
     * and the entries as {@code domain|key=value|...}), or nothing is decided.
     *
     * @param caller the caller the call named, or null where the file names none
     * @throws Forbidden if the caller may not ask for a limit a descriptor matches, saying which
     */
    CompletableFuture<RateLimitResponse> decide(
            RateLimitRequest request, EnvoyService.Setup setup, Callers.Caller caller)
            throws InvalidRequest, Forbidden {
        String domain = request.getDomain();
        if (domain.isEmpty()) {
            throw new InvalidRequest("domain must not be empty");
        }
        if (request.getDescriptorsCount() == 0) {
            throw new InvalidRequest("descriptors must not be empty");
        }
        long requestHits = Math.max(1, Integer.toUnsignedLong(request.getHitsAddend()));
        // Every descriptor is read before any is charged: a request found invalid takes nothing.
        List<Match> matches = new ArrayList<>(request.getDescriptorsCount());
        for (int i = 0; i < request.getDescriptorsCount(); i++) {
            matches.add(match(domain, request.getDescriptors(i), i, setup.limits()));
        }
        withoutReplaced(matches);
        if (caller != null) {
            for (Match match : matches) {
                String forbidden = match == null || match.policy() == null
                        ? null
                        : caller.forbids(match.policy(), match.bucketKey());
                if (forbidden != null) {
                    throw new Forbidden(forbidden);
                }
            }
        }
        List<Checked> checked = new ArrayList<>(matches.size());
        for (int i = 0; i < matches.size(); i++) {
            RateLimitDescriptor descriptor = request.getDescriptors(i);
            long cost =
                    descriptor.hasHitsAddend() ? hits(descriptor.getHitsAddend().getValue()) : requestHits;
            checked.add(new Checked(matches.get(i), cost, decide(matches.get(i), cost)));
        }
        CompletableFuture<?>[] pending = checked.stream().map(Checked::decision).toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(pending).thenCompose(done -> answer(domain, checked, setup));
    }

    /** A descriptor's own hits: 0 means 1, and an unsigned value past Long's range is simply too many. */
    private static long hits(long unsigned) {
        return unsigned < 0 ? Long.MAX_VALUE : Math.max(1, unsigned);
    }

    private static Match match(String domain, RateLimitDescriptor descriptor, int index, EnvoyRateLimits limits)
            throws InvalidRequest {
        if (descriptor.getEntriesCount() == 0) {
            throw new InvalidRequest("descriptors[" + index + "] has no entries");
        }
        List<Entry> entries = new ArrayList<>(descriptor.getEntriesCount());
        for (int j = 0; j < descriptor.getEntriesCount(); j++) {
            RateLimitDescriptor.Entry entry = descriptor.getEntries(j);
            if (entry.getKey().isEmpty()) {
                throw new InvalidRequest("descriptors[" + index + "].entries[" + j + "].key must not be empty");
            }
            entries.add(new Entry(entry.getKey(), entry.getValue()));
        }
        Optional<Match> match;
        if (descriptor.hasLimit()) {
            try {
                match = limits.override(
                        domain,
                        entries,
                        Integer.toUnsignedLong(descriptor.getLimit().getRequestsPerUnit()),
                        descriptor.getLimit().getUnit().name());
            } catch (IllegalArgumentException e) {
                throw new InvalidRequest("descriptors[" + index + "]." + e.getMessage());
            }
        } else {
            match = limits.match(domain, entries);
        }
        return match.orElse(null);
    }

    /**
     * Drops the limits that another limit the request matched replaces ({@code replaces}, by {@code name}), as
     * envoyproxy/ratelimit does: they are neither checked nor charged, and answered {@code OK}.
     */
    private static void withoutReplaced(List<Match> matches) {
        Set<String> replaced = null;
        for (Match match : matches) {
            if (match != null && !match.configured().replaces().isEmpty()) {
                if (replaced == null) {
                    replaced = new HashSet<>();
                }
                replaced.addAll(match.configured().replaces());
            }
        }
        if (replaced == null) {
            return;
        }
        for (int i = 0; i < matches.size(); i++) {
            Match match = matches.get(i);
            if (match != null && match.name() != null && replaced.contains(match.name())) {
                matches.set(i, null);
            }
        }
    }

    private CompletableFuture<Decision> decide(Match match, long cost) {
        if (match == null || match.policy() == null) {
            return CompletableFuture.completedFuture(null);
        }
        Policy policy = match.policy();
        if (cost > policy.maxCost()) {
            return CompletableFuture.completedFuture(never(policy));
        }
        try {
            return limiter.tryAcquireAsync(LimiterArguments.boundedKey(match.bucketKey()), policy, cost)
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A refusal, without asking the store, of hits that exceed a capacity: no bucket could ever hold them, and
     * none is charged.
     */
    private static Decision never(Policy policy) {
        int smallest = 0;
        for (int i = 1; i < policy.limits().size(); i++) {
            if (policy.limits().get(i).capacity()
                    < policy.limits().get(smallest).capacity()) {
                smallest = i;
            }
        }
        Limit limit = policy.limits().get(smallest);
        long refill = limit.refillTime().toNanos() / 1_000;
        return new Decision(false, limit, smallest, 0, refill, refill);
    }

    private CompletableFuture<RateLimitResponse> answer(
            String domain, List<Checked> checked, EnvoyService.Setup setup) {
        List<RuleOutcome> outcomes = new ArrayList<>();
        boolean overLimit = false;
        for (Checked one : checked) {
            overLimit |= !one.allowed() && !one.match().shadow();
            if (one.bucketed()) {
                outcomes.add(new RuleOutcome(
                        rule(one.match(), setup.shadowMode()),
                        one.match().bucketKey(),
                        one.decision().join()));
            }
        }
        // The global shadow mode answers OK whatever the descriptors say, as envoyproxy/ratelimit's SHADOW_MODE:
        // their statuses stay as decided, and the request, which goes on, keeps what it was charged.
        boolean refused = overLimit && !setup.shadowMode();
        RateLimitResponse.Builder response = RateLimitResponse.newBuilder();
        response.setOverallCode(refused ? Code.OVER_LIMIT : Code.OK);
        for (Checked one : checked) {
            response.addStatuses(DescriptorStatuses.of(one, refused));
            if (one.match() != null) {
                metrics.decided(
                        domain,
                        one.match(),
                        one.allowed(),
                        one.bucketed() && one.decision().join().degraded());
            }
        }
        if (overLimit && !refused) {
            metrics.globalShadowMode(domain);
        }
        if (!outcomes.isEmpty()) {
            RequestDecision rendered = renderers.get(setup.xRateLimitHeaders()).respond(outcomes);
            rendered.headers().forEach((name, value) -> {
                if (HEADERS.contains(name)) {
                    response.addResponseHeadersToAdd(
                            HeaderValue.newBuilder().setKey(name).setValue(value));
                }
            });
        }
        if (!refused) {
            return CompletableFuture.completedFuture(response.build());
        }
        // Answered once the tokens are back, so that the next request sees them.
        return giveBack(checked).handle((refunded, failure) -> response.build());
    }

    /** The rule that renders a descriptor's header fields: a dry run for a shadow one, or under the shadow mode. */
    private Rule rule(Match match, boolean shadowMode) {
        RuleKey key = new RuleKey(match.policy(), match.shadow() || shadowMode);
        Rule rule = rules.get(key);
        if (rule == null) {
            rule = Rule.builder(key.policy()).dryRun(key.shadow()).build();
            // The files' policies are few; overrides make a policy per limit a request names, so stop caching
            // rather than let requests grow the map.
            if (rules.size() < MAX_CACHED_RULES) {
                rules.putIfAbsent(key, rule);
            }
        }
        return rule;
    }

    /**
     * Gives back what the allowed descriptors of a refused request took from the store; the stage completes
     * when every refund has, whether or not it succeeded (a failed one leaves its tokens taken, as if the
     * request had passed).
     */
    private CompletableFuture<Void> giveBack(List<Checked> checked) {
        List<CompletableFuture<Void>> refunds = new ArrayList<>();
        for (Checked one : checked) {
            if (!one.bucketed()) {
                continue;
            }
            Decision decision = one.decision().join();
            if (decision.allowed() && !decision.degraded()) {
                String key = LimiterArguments.boundedKey(one.match().bucketKey());
                CompletableFuture<Void> refund;
                try {
                    refund = limiter.refundAsync(key, one.match().policy(), one.cost())
                            .toCompletableFuture();
                } catch (RuntimeException e) {
                    refund = CompletableFuture.failedFuture(e);
                }
                refunds.add(refund.exceptionally(failure -> {
                    LOG.log(
                            Level.DEBUG,
                            "giving back the tokens of a refused request failed; they stay taken",
                            failure);
                    return null;
                }));
            }
        }
        return CompletableFuture.allOf(refunds.toArray(CompletableFuture[]::new));
    }
}
