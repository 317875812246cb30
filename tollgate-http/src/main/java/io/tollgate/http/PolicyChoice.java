package io.tollgate.http;

import io.tollgate.Policy;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * How a rule chooses the policy of each request, and which clients it never limits or always refuses:
 *
 * <ol>
 *   <li>a client on the {@linkplain #deny() denylist} is refused (403), one on the {@linkplain #allow()
 *       allowlist} is never limited (both by client key, or by client IP address or CIDR block);
 *   <li>an {@linkplain #overrides() override} of the client key gives its policy;
 *   <li>else the {@linkplain #source() source}, if any, names a policy among {@link #policies()};
 *   <li>else, and when that name is no policy's, the rule's own policy applies.
 * </ol>
 *
 * <p>Immutable and thread-safe.
 */
public final class PolicyChoice {

    /** What a rule's lists say of a client. */
    public enum Listing {
        /** On neither list: limited. */
        NONE,
        /** On the allowlist: never limited. */
        ALLOWED,
        /** On the denylist: always refused. */
        DENIED
    }

    private static final PolicyChoice FIXED =
            new PolicyChoice(null, Map.of(), Map.of(), ClientList.NONE, ClientList.NONE);

    private final PolicySource source;
    private final Map<String, Policy> policies;
    private final Map<String, Policy> overrides;
    private final ClientList allow;
    private final ClientList deny;

    private PolicyChoice(
            PolicySource source,
            Map<String, Policy> policies,
            Map<String, Policy> overrides,
            ClientList allow,
            ClientList deny) {
        this.source = source;
        this.policies = Map.copyOf(policies);
        this.overrides = Map.copyOf(overrides);
        this.allow = allow;
        this.deny = deny;
    }

    /** Returns the choice of a rule that charges its own policy to every client. */
    public static PolicyChoice fixed() {
        return FIXED;
    }

    /**
     * Returns a choice.
     *
     * @param source where a request's policy name comes from, or null for none
     * @param policies the policies a source's name may select, by name
     * @param overrides the policy of a client key, whatever the source says
     * @param allow client keys, IP addresses and CIDR blocks never limited
     * @param deny client keys, IP addresses and CIDR blocks always refused
     * @throws IllegalArgumentException if a list entry is blank or a bad IP block, or a key is on both lists,
     *     or a table of the source names no policy among {@code policies}, naming it
     * @throws NullPointerException if an argument but the source is null
     */
    public static PolicyChoice of(
            PolicySource source,
            Map<String, Policy> policies,
            Map<String, Policy> overrides,
            List<String> allow,
            List<String> deny) {
        ClientList allowed = ClientList.of(Objects.requireNonNull(allow, "allow"));
        ClientList denied = ClientList.of(Objects.requireNonNull(deny, "deny"));
        for (String entry : allowed.entries()) {
            if (denied.entries().contains(entry)) {
                throw new IllegalArgumentException("'" + entry + "' is on both the allow and the deny list");
            }
        }
        Map<String, String> table = source instanceof PolicySource.KeyTable keys
                ? keys.plans()
                : source instanceof KeyTableFile file ? file.plans() : Map.of();
        table.forEach((key, name) -> {
            if (!policies.containsKey(name)) {
                throw new IllegalArgumentException("key '" + key + "' names unknown policy '" + name + "'; defined: "
                        + String.join(", ", new TreeSet<>(policies.keySet())));
            }
        });
        return new PolicyChoice(source, policies, Objects.requireNonNull(overrides, "overrides"), allowed, denied);
    }

    /**
     * Returns what the lists say of the request's client.
     *
     * @param value the client's own value, as {@link ClientKey#value} gives it
     */
    public Listing listing(String value, HttpRequestView request, ClientIpResolver clientIps) {
        if (deny.matches(value, request, clientIps)) {
            return Listing.DENIED;
        }
        return allow.matches(value, request, clientIps) ? Listing.ALLOWED : Listing.NONE;
    }

    /**
     * Returns the policy of the request; {@code fallback} when none is chosen.
     *
     * @param value the client's own value, as {@link ClientKey#value} gives it, such as an API key
     */
    public Policy choose(Policy fallback, HttpRequestView request, String value) {
        Policy override = overrides.get(value);
        if (override != null) {
            return override;
        }
        if (source == null) {
            return fallback;
        }
        String name = source.policyName(request, value);
        Policy chosen = name == null ? null : policies.get(name);
        return chosen != null ? chosen : fallback;
    }

    /** Whether this choice ever gives another policy than the rule's own, or lists any client. */
    public boolean isFixed() {
        return source == null && overrides.isEmpty() && allow.isEmpty() && deny.isEmpty();
    }

    /** Returns every policy this choice may give, the rule's own aside. */
    public Iterable<Policy> choosable() {
        Set<Policy> all = new LinkedHashSet<>(overrides.values());
        if (source != null) {
            all.addAll(policies.values());
        }
        return all;
    }

    /** Returns where a request's policy name comes from, or null for none. */
    public PolicySource source() {
        return source;
    }

    /** Returns the policies a source's name may select, by name. */
    public Map<String, Policy> policies() {
        return policies;
    }

    /** Returns the policy of each overridden client key. */
    public Map<String, Policy> overrides() {
        return overrides;
    }

    /** Returns the allowlist's entries, as given. */
    public List<String> allow() {
        return allow.entries();
    }

    /** Returns the denylist's entries, as given. */
    public List<String> deny() {
        return deny.entries();
    }
}
