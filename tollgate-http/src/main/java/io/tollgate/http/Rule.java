package io.tollgate.http;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which requests a policy applies to, and how a client is told from another: a rule matches requests by
 * path pattern, methods, host and the presence of a header, and charges {@code cost} tokens of {@code
 * policy} to the bucket of the client {@code key}. A rule may also, or instead, hold the client to a {@link
 * ConcurrencyLimit}: a request takes one of the key's slots for as long as it is served, and is refused
 * while every slot is taken.
 *
 * <p>Several rules may match one request (per IP, per API key, a global limit): all apply, and the request
 * is refused if any refuses. A {@code dryRun} rule decides and reports in headers and metrics, but never
 * refuses.
 *
 * @param path the path pattern, see {@link PathPattern}
 * @param methods the methods matched, upper-case; empty matches every method
 * @param host the host matched, lower-case, or null for any host
 * @param requiredHeader a header that must be present for the rule to match, or null
 * @param policy the policy charged, unless {@code choice} gives another; null for a rule that only limits
 *     requests in flight
 * @param key the client key
 * @param cost the tokens a request costs, 1 to the policy's smallest capacity
 * @param onMissingKey what to do with a request that lacks its key's source
 * @param dryRun whether the rule only reports, never refuses
 * @param choice how the policy of a request is chosen, and which clients are listed
 * @param responseCost how the cost is settled once the response is known; {@link ResponseCost#none()} keeps it
 * @param inFlight the limit on the client's requests in flight, or null
 * @param priority how much the rule's requests matter when the service is overloaded ({@link OverloadProtection}),
 *     or null to take the priority of the policy a request is charged (its client's plan), else {@link
 *     Priority#DEFAULT}
 */
public record Rule(
        PathPattern path,
        Set<String> methods,
        String host,
        String requiredHeader,
        Policy policy,
        ClientKey key,
        long cost,
        MissingKey onMissingKey,
        boolean dryRun,
        PolicyChoice choice,
        ResponseCost responseCost,
        ConcurrencyLimit inFlight,
        Priority priority) {

    /**
     * Validates the rule.
     *
     * @throws IllegalArgumentException if the cost is out of range for the policy or a policy the choice may
     *     give; or if there is neither a policy nor an in-flight limit, or a rule without a policy chooses one
     *     per request or settles a cost after the response
     * @throws NullPointerException if the path, methods, key, onMissingKey, choice or responseCost is null
     */
    public Rule {
        Objects.requireNonNull(choice, "choice");
        Objects.requireNonNull(responseCost, "responseCost");
        Objects.requireNonNull(path, "path");
        if (policy == null && inFlight == null) {
            throw new IllegalArgumentException("a rule needs a policy, a concurrency limit, or both");
        }
        if (policy == null && (choice.choosable().iterator().hasNext() || choice.source() != null)) {
            throw new IllegalArgumentException("a rule without a policy cannot choose one per request");
        }
        if (policy == null && responseCost.settles()) {
            throw new IllegalArgumentException("a rule without a policy has no cost to settle after the response");
        }
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(onMissingKey, "onMissingKey");
        Set<String> upper = new TreeSet<>();
        for (String method : Objects.requireNonNull(methods, "methods")) {
            upper.add(method.toUpperCase(Locale.ROOT));
        }
        methods = Set.copyOf(upper);
        host = host == null ? null : host.toLowerCase(Locale.ROOT);
        if (policy != null) {
            policy.checkCost(cost);
        } else if (cost != 1) {
            throw new IllegalArgumentException(
                    "a rule without a policy takes no tokens; its cost must be 1, was " + cost);
        }
        for (Policy choosable : choice.choosable()) {
            choosable.checkCost(cost);
        }
    }

    /**
     * Returns a rule whose cost is final when it decides, as the canonical constructor with {@link
     * ResponseCost#none()}.
     *
     * @throws IllegalArgumentException if the cost is out of range for the policy or a policy the choice may
     *     give
     * @throws NullPointerException if the path, methods, policy, key, onMissingKey or choice is null
     */
    public Rule(
            PathPattern path,
            Set<String> methods,
            String host,
            String requiredHeader,
            Policy policy,
            ClientKey key,
            long cost,
            MissingKey onMissingKey,
            boolean dryRun,
            PolicyChoice choice) {
        this(
                path,
                methods,
                host,
                requiredHeader,
                Objects.requireNonNull(policy, "policy"),
                key,
                cost,
                onMissingKey,
                dryRun,
                choice,
                ResponseCost.none(),
                null,
                null);
    }

    /** Returns a builder for a rule charging {@code policy}; it matches every request until narrowed. */
    public static Builder builder(Policy policy) {
        return new Builder(Objects.requireNonNull(policy, "policy"), null);
    }

    /**
     * Returns a builder for a rule that only limits requests in flight, under {@code limit}; it matches every
     * request until narrowed.
     */
    public static Builder builder(ConcurrencyLimit limit) {
        return new Builder(null, Objects.requireNonNull(limit, "limit"));
    }

    /**
     * Returns the name this rule is known by in metrics and refusals: its policy's, or its concurrency
     * limit's when it has no policy.
     */
    public String name() {
        return policy != null ? policy.name() : inFlight.name();
    }

    /** Returns whether this rule applies to {@code request}. */
    public boolean matches(HttpRequestView request) {
        if (!methods.isEmpty() && !methods.contains(request.method().toUpperCase(Locale.ROOT))) {
            return false;
        }
        if (host != null && !host.equalsIgnoreCase(request.host())) {
            return false;
        }
        if (requiredHeader != null && request.header(requiredHeader) == null) {
            return false;
        }
        return path.matches(request.path());
    }

    /** Settings for a {@link Rule}. Not thread-safe. */
    public static final class Builder {

        private final Policy policy;
        private ConcurrencyLimit inFlight;
        private PathPattern path = PathPattern.of("/**");
        private final List<String> methods = new ArrayList<>();
        private String host;
        private String requiredHeader;
        private ClientKey key = ClientKey.ip();
        private long cost = 1;
        private MissingKey onMissingKey = MissingKey.skip();
        private boolean dryRun;
        private ResponseCost responseCost = ResponseCost.none();
        private PolicySource source;
        private Map<String, Policy> choosable = Map.of();
        private final Map<String, Policy> overrides = new LinkedHashMap<>();
        private final List<String> allow = new ArrayList<>();
        private final List<String> deny = new ArrayList<>();
        private Priority priority;

        private Builder(Policy policy, ConcurrencyLimit inFlight) {
            this.policy = policy;
            this.inFlight = inFlight;
        }

        /** Also holds each client to {@code limit}: at most its maximum requests in flight at once. */
        public Builder inFlight(ConcurrencyLimit limit) {
            this.inFlight = Objects.requireNonNull(limit, "limit");
            return this;
        }

        /**
         * Matches paths by a pattern such as {@code /api/**} (default {@code /**}), whatever their case unless
         * {@link #exactPathCase}.
         */
        public Builder path(String pattern) {
            this.path = path.isExactCase() ? PathPattern.of(pattern).withExactCase() : PathPattern.of(pattern);
            return this;
        }

        /**
         * Whether the path pattern matches only paths in its own case (default false: {@code /API/x} counts under
         * {@code /api/**}, since many services serve it as {@code /api/x}, and counting more is the safe side).
         */
        public Builder exactPathCase(boolean exact) {
            PathPattern pattern = PathPattern.of(path.toString());
            this.path = exact ? pattern.withExactCase() : pattern;
            return this;
        }

        /** Matches only these methods (default: every method). */
        public Builder methods(String... methods) {
            this.methods.addAll(List.of(methods));
            return this;
        }

        /** Matches only requests to this host (default: any host). */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Matches only requests that carry this header. */
        public Builder requireHeader(String name) {
            this.requiredHeader = Objects.requireNonNull(name, "name");
            return this;
        }

        /** Tells clients apart by this key (default {@link ClientKey#ip()}). */
        public Builder key(ClientKey key) {
            this.key = Objects.requireNonNull(key, "key");
            return this;
        }

        /** Charges this many tokens per request (default 1). */
        public Builder cost(long cost) {
            this.cost = cost;
            return this;
        }

        /** Sets what to do when a request lacks the key's source (default {@link MissingKey#skip()}). */
        public Builder onMissingKey(MissingKey onMissingKey) {
            this.onMissingKey = Objects.requireNonNull(onMissingKey, "onMissingKey");
            return this;
        }

        /**
         * Gives the rule's requests this priority when the service is overloaded (default: the priority of the
         * policy a request is charged, set on the {@link RequestLimiter.Builder#priority request limiter}, else
         * {@link Priority#DEFAULT}).
         */
        public Builder priority(Priority priority) {
            this.priority = Objects.requireNonNull(priority, "priority");
            return this;
        }

        /** Only reports, never refuses (default false). */
        public Builder dryRun(boolean dryRun) {
            this.dryRun = dryRun;
            return this;
        }

        /**
         * Settles each request's cost once its response is known (default {@link ResponseCost#none()}: the
         * cost taken when deciding is final).
         */
        public Builder responseCost(ResponseCost responseCost) {
            this.responseCost = Objects.requireNonNull(responseCost, "responseCost");
            return this;
        }

        /**
         * Charges each request the policy that {@code source} names among {@code policies} (by name), and the
         * rule's own policy when it names none of them.
         *
         * @throws IllegalArgumentException if the source is a table that names a policy not in {@code policies}
         */
        public Builder policyFrom(PolicySource source, Map<String, Policy> policies) {
            PolicyChoice.of(source, policies, Map.of(), List.of(), List.of()); // checks a table's names now
            this.source = source;
            this.choosable = Map.copyOf(policies);
            return this;
        }

        /** Charges the client {@code key} this policy, whatever the source says. */
        public Builder override(String key, Policy policy) {
            overrides.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(policy, "policy"));
            return this;
        }

        /**
         * Never limits these clients: client keys, IP addresses or CIDR blocks. They are still counted.
         *
         * @throws IllegalArgumentException if an entry is blank, a bad IP block, or on the deny list
         */
        public Builder allow(List<String> entries) {
            PolicyChoice.of(null, Map.of(), Map.of(), entries, deny); // checks the entries now
            allow.addAll(entries);
            return this;
        }

        /**
         * Always refuses these clients (403 and a problem body): client keys, IP addresses or CIDR blocks.
         *
         * @throws IllegalArgumentException if an entry is blank, a bad IP block, or on the allow list
         */
        public Builder deny(List<String> entries) {
            PolicyChoice.of(null, Map.of(), Map.of(), allow, entries); // checks the entries now
            deny.addAll(entries);
            return this;
        }

        /**
         * Returns the rule.
         *
         * @throws IllegalArgumentException if the cost is out of range for a policy the rule may charge
         */
        public Rule build() {
            PolicyChoice choice = source == null && overrides.isEmpty() && allow.isEmpty() && deny.isEmpty()
                    ? PolicyChoice.fixed()
                    : PolicyChoice.of(source, choosable, overrides, allow, deny);
            return new Rule(
                    path,
                    Set.copyOf(methods),
                    host,
                    requiredHeader,
                    policy,
                    key,
                    cost,
                    onMissingKey,
                    dryRun,
                    choice,
                    responseCost,
                    inFlight,
                    priority);
        }
    }
}
