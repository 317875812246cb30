package io.tollgate.http;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * Where a rule finds the name of the policy a request is charged to, such as its customer's plan: a header
 * set by the authentication layer in front ({@code X-Plan: gold}), a claim of the request's JWT, or a table
 * from the client's key (an API key) to a policy. A rule whose source gives no name, or a name that no
 * policy has, charges its default policy ({@link Rule#policy()}).
 *
 * <p>A JWT claim is read without verifying the token's signature: it selects a bucket, it does not
 * authenticate. Put the limiter behind whatever verifies the token, or choose a source that a client cannot
 * forge. Implementations are immutable and thread-safe.
 */
public sealed interface PolicySource
        permits PolicySource.Header, PolicySource.JwtClaim, PolicySource.KeyTable, KeyTableFile {

    /**
     * Returns the policy name that this source gives the request, or null for none.
     *
     * @param key the client's own value for the rule's key ({@link ClientKey#value}), such as an API key
     */
    String policyName(HttpRequestView request, String key);

    /** Returns how the configuration names this source, such as {@code header:X-Plan}. */
    String describe();

    /** Reads the policy name from the header {@code name}. */
    static PolicySource header(String name) {
        return new Header(name);
    }

    /**
     * Reads the policy name from the claim {@code claim} of the JWT in {@code Authorization: Bearer TOKEN},
     * a string or a number, decoded without verifying the signature.
     */
    static PolicySource jwtClaim(String claim) {
        return new JwtClaim(claim);
    }

    /** Looks the client key up in {@code plans}, from key to policy name. */
    static PolicySource keyTable(Map<String, String> plans) {
        return new KeyTable(plans);
    }

    /**
     * Looks the client key up in a file of its own, YAML ({@code key: policy} lines) or {@code .properties},
     * read again within a second of a change. A file that cannot be read or parsed keeps the table it had,
     * and says why in the log; it must be readable when the rule is built.
     *
     * @throws IllegalArgumentException if the file cannot be read or parsed, naming it and the problem
     */
    static PolicySource keyTableFile(Path file) {
        return new KeyTableFile(file);
    }

    /** The policy name in a request header. */
    record Header(String name) implements PolicySource {

        /**
         * @throws IllegalArgumentException if the name is blank
         * @throws NullPointerException if the name is null
         */
        public Header {
            if (Objects.requireNonNull(name, "name").isBlank()) {
                throw new IllegalArgumentException("a policy header needs a name");
            }
        }

        @Override
        public String policyName(HttpRequestView request, String key) {
            String value = request.header(name);
            return value == null ? null : value.strip();
        }

        @Override
        public String describe() {
            return "header:" + name;
        }
    }

    /** The policy name in a claim of the request's bearer JWT, not verified. */
    record JwtClaim(String claim) implements PolicySource {

        /**
         * @throws IllegalArgumentException if the claim is blank
         * @throws NullPointerException if the claim is null
         */
        public JwtClaim {
            if (Objects.requireNonNull(claim, "claim").isBlank()) {
                throw new IllegalArgumentException("a JWT claim source needs the claim's name");
            }
        }

        @Override
        public String policyName(HttpRequestView request, String key) {
            return JwtClaims.claim(request.header("Authorization"), claim);
        }

        @Override
        public String describe() {
            return "jwt-claim:" + claim;
        }
    }

    /** The policy name of the client key, in a table. */
    record KeyTable(Map<String, String> plans) implements PolicySource {

        /** @throws NullPointerException if the table, a key or a name is null */
        public KeyTable {
            plans = Map.copyOf(plans);
        }

        @Override
        public String policyName(HttpRequestView request, String key) {
            return plans.get(key);
        }

        @Override
        public String describe() {
            return "api-keys";
        }
    }
}
