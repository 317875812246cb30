package io.tollgate.http;

import java.util.Objects;

/**
 * What a rule does with a request that lacks its key's source, such as a request without the API key
 * header that the rule is keyed by.
 */
public sealed interface MissingKey {

    /** Does not apply the rule to the request. */
    static MissingKey skip() {
        return Skip.INSTANCE;
    }

    /** Applies the rule with another key instead, usually {@link ClientKey#ip()}. */
    static MissingKey fallback(ClientKey key) {
        return new Fallback(key);
    }

    /**
     * Refuses the request with {@code status}, such as 401 when an API key is required, or 400.
     *
     * @throws IllegalArgumentException if status is not a 4xx status
     */
    static MissingKey reject(int status) {
        return new Reject(status);
    }

    /**
     * Parses configuration: {@code skip}, {@code fallback:KEY} (such as {@code fallback:ip}) or {@code
     * reject:STATUS} (such as {@code reject:401}).
     *
     * @throws IllegalArgumentException if the text is none of these, naming it
     */
    static MissingKey parse(String text) {
        String value = Objects.requireNonNull(text, "text").strip();
        try {
            if (value.equals("skip")) {
                return skip();
            }
            if (value.startsWith("fallback:")) {
                return fallback(ClientKey.parse(value.substring("fallback:".length())));
            }
            if (value.startsWith("reject:")) {
                return reject(
                        Integer.parseInt(value.substring("reject:".length()).strip()));
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid on-missing-key '" + text + "': " + e.getMessage(), e);
        }
        throw new IllegalArgumentException(
                "invalid on-missing-key '" + text + "': use skip, fallback:KEY or reject:STATUS (such as reject:401)");
    }

    /** The rule does not apply. */
    enum Skip implements MissingKey {
        INSTANCE
    }

    /** The rule applies with another key. */
    record Fallback(ClientKey key) implements MissingKey {

        /**
         * Creates the choice of {@code key} instead.
         *
         * @throws NullPointerException if key is null
         */
        public Fallback {
            Objects.requireNonNull(key, "key");
        }
    }

    /** The request is refused with a 4xx status. */
    record Reject(int status) implements MissingKey {

        /**
         * Creates the refusal with {@code status}.
         *
         * @throws IllegalArgumentException if status is not a 4xx status
         */
        public Reject {
            if (status < 400 || status > 499) {
                throw new IllegalArgumentException("a missing key is rejected with a 4xx status, was " + status);
            }
        }
    }
}
