package io.tollgate.http;

import io.tollgate.Priority;

/**
 * Where a {@link RequestLimiter} reports what it decides. The default records nothing; {@link
 * MicrometerRequestMetrics} records to a Micrometer registry. An interface of Tollgate's own, so that
 * Micrometer stays an optional dependency.
 */
interface RequestMetrics {

    RequestMetrics NONE = new RequestMetrics() {};

    /** Called for every rule that was checked for a request, dry runs included. */
    default void decided(RuleOutcome outcome) {}

    /** Called when a request lacked the source of a rule's key, with what was done about it. */
    default void missingKey(Rule rule) {}

    /** Called when a rule's client is on its allowlist (not limited) or its denylist (refused). */
    default void listed(Rule rule, PolicyChoice.Listing listing) {}

    /**
     * Called when a request's cost was settled after its response: {@code difference} tokens charged
     * (positive) or given back (negative), or lost when {@code landed} is false because the store could not
     * take them.
     */
    default void settled(RuleOutcome outcome, long difference, boolean landed) {}

    /** Called for every slot of a concurrency limit asked for a request, taken or refused. */
    default void permit(Rule rule, io.tollgate.Permit permit) {}

    /** Called for every request that overload protection admitted ({@code shed} false) or refused (true). */
    default void overload(Priority priority, boolean shed) {}

    /** Called when a request limiter is built with {@code protection}: its gauges now read this one. */
    default void protection(OverloadProtection protection) {}

    /** Called at the end of {@link RequestLimiter#warmUp}: forgets what the warm-up's own rules recorded. */
    default void forgetWarmUp() {}
}
