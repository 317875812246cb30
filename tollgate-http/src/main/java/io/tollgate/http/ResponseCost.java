package io.tollgate.http;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * How a rule settles a request's cost once its response is known: the rule takes its {@code cost} when it
 * decides, so that a client over its limit is refused before it is served, and after the response the
 * difference between that and the request's real cost is charged or given back.
 *
 * <ul>
 *   <li>{@link #fromHeader(String) A header} of the response gives the whole cost, such as the tokens a
 *       language model used ({@code X-Tokens-Used: 1500}): the rule charges what it exceeds the cost taken
 *       by, or refunds what it falls short. A response without the header, or with one that is not a whole
 *       number of 0 or more, keeps the cost taken.
 *   <li>{@link #onlyForStatuses(String...) Only responses of some statuses} cost anything, such as 401 and
 *       403, so that only failed logins count: any other status gives the cost back.
 *   <li>{@link #refundForStatuses(String...) Responses of some statuses} cost nothing, such as {@code 5xx},
 *       so that clients do not pay for the server's failures.
 * </ul>
 *
 * A status is given as a code ({@code 401}) or a class ({@code 5xx}). A response that counts, and has no
 * header to read, costs the rule's {@code cost}. The status is the one the client was answered with,
 * including a refusal by another rule.
 *
 * <p>A charge may leave the bucket in debt (see {@code RateLimiter#chargeAsync}): the headers of the
 * response that did it show the state before the charge, and the client's next requests are refused until
 * the debt is refilled.
 *
 * <p>Immutable and thread-safe.
 *
 * @param header the response header that gives the whole cost, or null
 * @param chargeStatuses the statuses whose responses cost anything; empty for every status but those refunded
 * @param refundStatuses the statuses whose responses cost nothing
 */
public record ResponseCost(String header, List<String> chargeStatuses, List<String> refundStatuses) {

    private static final ResponseCost NONE = new ResponseCost(null, List.of(), List.of());

    /** The largest cost read from a header: beyond it, no bucket's debt can be counted exactly anyway. */
    static final long MAX_HEADER_COST = 1L << 53;

    /**
     * Validates the settings.
     *
     * @throws IllegalArgumentException if the header is blank or not a token, a status is neither a code from
     *     100 to 599 nor a class such as {@code 5xx}, or both lists are given
     * @throws NullPointerException if a list is null
     */
    public ResponseCost {
        if (header != null && !header.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
            throw new IllegalArgumentException("a response cost header must be a header name, was '" + header + "'");
        }
        chargeStatuses = statuses(chargeStatuses, "charge-statuses");
        refundStatuses = statuses(refundStatuses, "refund-statuses");
        if (!chargeStatuses.isEmpty() && !refundStatuses.isEmpty()) {
            throw new IllegalArgumentException(
                    "give charge-statuses (only they cost) or refund-statuses (they cost nothing), not both");
        }
    }

    /** Returns the response cost of a rule that settles nothing after the response: its cost is final. */
    public static ResponseCost none() {
        return NONE;
    }

    /**
     * Returns a response cost read from the response header {@code name}, which gives the request's whole cost.
     *
     * @throws IllegalArgumentException if the name is not a header name
     * @throws NullPointerException if name is null
     */
    public static ResponseCost fromHeader(String name) {
        return new ResponseCost(Objects.requireNonNull(name, "name"), List.of(), List.of());
    }

    /**
     * Returns a response cost under which only responses of these statuses cost anything, such as {@code
     * "401", "403"}; the rule's cost is given back for any other.
     *
     * @throws IllegalArgumentException if a status is invalid, naming it, or none is given
     */
    public static ResponseCost onlyForStatuses(String... statuses) {
        return NONE.chargingOnly(statuses);
    }

    /**
     * Returns a response cost under which responses of these statuses, such as {@code "5xx"}, cost nothing.
     *
     * @throws IllegalArgumentException if a status is invalid, naming it, or none is given
     */
    public static ResponseCost refundForStatuses(String... statuses) {
        return NONE.refunding(statuses);
    }

    /**
     * Returns this response cost, with only responses of these statuses costing anything.
     *
     * @throws IllegalArgumentException if a status is invalid, naming it, none is given, or this one refunds
     *     statuses
     */
    public ResponseCost chargingOnly(String... statuses) {
        return new ResponseCost(header, nonEmpty(statuses), refundStatuses);
    }

    /**
     * Returns this response cost, with responses of these statuses costing nothing.
     *
     * @throws IllegalArgumentException if a status is invalid, naming it, none is given, or this one charges
     *     only some statuses
     */
    public ResponseCost refunding(String... statuses) {
        return new ResponseCost(header, chargeStatuses, nonEmpty(statuses));
    }

    /** Returns whether a rule with this response cost settles anything after the response. */
    public boolean settles() {
        return header != null || !chargeStatuses.isEmpty() || !refundStatuses.isEmpty();
    }

    /**
     * Returns what a request costs in the end, given what it was charged when decided, the status answered and
     * the response's header fields.
     *
     * @param taken the cost taken when the request was decided
     * @param status the response's status
     * @param responseHeader the response's header value by name, or null where absent
     */
    long finalCost(long taken, int status, Function<String, String> responseHeader) {
        boolean counts = chargeStatuses.isEmpty() ? !matches(refundStatuses, status) : matches(chargeStatuses, status);
        if (!counts) {
            return 0;
        }
        if (header == null) {
            return taken;
        }
        long read = wholeNumber(responseHeader.apply(header));
        return read < 0 ? taken : read;
    }

    /** Returns the whole number a header says, or -1 if it says none (absent, signed, too large or not digits). */
    private static long wholeNumber(String value) {
        if (value == null) {
            return -1;
        }
        String digits = value.strip();
        if (digits.isEmpty() || digits.length() > 16 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        long number = Long.parseLong(digits);
        return number > MAX_HEADER_COST ? -1 : number;
    }

    private static boolean matches(List<String> statuses, int status) {
        String code = Integer.toString(status);
        for (String entry : statuses) {
            if (entry.equals(code)
                    || (entry.endsWith("xx") && code.length() == 3 && entry.charAt(0) == code.charAt(0))) {
                return true;
            }
        }
        return false;
    }

    private static List<String> nonEmpty(String... statuses) {
        if (statuses.length == 0) {
            throw new IllegalArgumentException("give at least one status, such as 401 or 5xx");
        }
        return List.of(statuses);
    }

    private static List<String> statuses(List<String> statuses, String setting) {
        Objects.requireNonNull(statuses, setting);
        List<String> normalized = statuses.stream()
                .map(status -> Objects.requireNonNull(status, setting).strip().toLowerCase(Locale.ROOT))
                .toList();
        for (int i = 0; i < normalized.size(); i++) {
            if (!normalized.get(i).matches("[1-5](\\d\\d|xx)")) {
                throw new IllegalArgumentException(setting + ": a status is a code from 100 to 599 or a class such as"
                        + " 5xx, was '" + statuses.get(i) + "'");
            }
        }
        return normalized;
    }
}
