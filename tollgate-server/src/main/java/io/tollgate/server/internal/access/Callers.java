package io.tollgate.server.internal.access;

import io.tollgate.Policy;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The callers the {@code callers} section names: who may ask the decision API and Envoy's rate limit service,
 * each by a bearer token or a client certificate's subject, and what each may ask. With none, every caller that
 * reaches the port is served; with some, a call must name one.
 *
 * <p>Tokens are kept as their SHA-256 digests, never as they were read, and a presented token is compared with
 * every caller's in constant time: the time an answer takes says nothing of how near a guess came. Immutable.
 *
 * @param callers the callers, in the file's order; names and tokens are each unique
 */
public record Callers(List<Caller> callers) {

    /** No callers named: every caller that reaches a port is served. */
    public static final Callers NONE = new Callers(List.of());

    /** A caller's name: as a policy's, so that it is safe in a log line and a meter's tag. */
    public static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /** The name meters give a call that named no caller. */
    public static final String UNKNOWN = "unknown";

    /**
     * One caller.
     *
     * @param name its name, in logs and meters
     * @param tokenDigest the SHA-256 of its bearer token, or null if it is known by certificate only
     * @param certificateSubject the subject of its client certificate (RFC 2253, as {@code
     *     X500Principal.getName()} gives it), or null
     * @param policies the policies it may ask of, or empty for every one
     * @param keyPrefix what every key it names starts with, or empty for any key
     */
    public record Caller(
            String name, byte[] tokenDigest, String certificateSubject, Set<String> policies, String keyPrefix) {

        /** Copies the policies. */
        public Caller {
            policies = Set.copyOf(policies);
        }

        /**
         * Returns why this caller may not ask of {@code policy} for {@code key}, as an answer's detail; null if it
         * may.
         */
        public String forbids(Policy policy, String key) {
            if (!policies.isEmpty() && !policies.contains(policy.name())) {
                return "Caller '" + name + "' may not use policy '" + policy.name() + "'; its policies: "
                        + String.join(", ", new TreeSet<>(policies)) + ".";
            }
            if (!key.startsWith(keyPrefix)) {
                return "Caller '" + name + "' may name only keys that start with '" + keyPrefix + "'.";
            }
            return null;
        }

        @Override
        public String toString() {
            return "Caller[" + name + "]"; // never the token's digest
        }
    }

    /** Copies the list. */
    public Callers {
        callers = List.copyOf(callers);
    }

    /** Whether a call must name a caller. */
    public boolean required() {
        return !callers.isEmpty();
    }

    /**
     * Returns the caller whose token {@code authorization} carries ({@code Bearer TOKEN}, the scheme in any case),
     * else the one whose certificate subject is {@code certificateSubject}; null for neither. Every caller's token
     * is compared, whichever matches.
     */
    public Caller identify(String authorization, String certificateSubject) {
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            byte[] presented = digest(authorization.substring(7).strip());
            Caller found = null;
            for (Caller caller : callers) {
                // MessageDigest.isEqual takes the same time for any two digests of one length; no early exit
                if (caller.tokenDigest() != null && MessageDigest.isEqual(presented, caller.tokenDigest())) {
                    found = caller;
                }
            }
            if (found != null) {
                return found;
            }
        }
        if (certificateSubject != null) {
            for (Caller caller : callers) {
                if (certificateSubject.equals(caller.certificateSubject())) {
                    return caller;
                }
            }
        }
        return null;
    }

    /** Returns the SHA-256 of a token's UTF-8 bytes, as callers' tokens are kept. */
    public static byte[] digest(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return "Callers" + callers.stream().map(Caller::name).toList();
    }
}
