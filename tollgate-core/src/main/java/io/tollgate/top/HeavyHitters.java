package io.tollgate.top;

import io.tollgate.DecisionEvent;
import io.tollgate.DecisionListener;
import io.tollgate.TimeSource;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who is limited: per policy, the keys refused most and the keys charged most, over the last minute and the last
 * 15 minutes, each in memory fixed by {@link #capacity()} whatever the number of distinct keys (a random-key flood
 * cannot grow it). Counts are estimates with a proven bound ({@link SpaceSaving}): a key's count is never below
 * what it weighed, and at most {@link Report#errorBound()} above.
 *
 * <p>A {@link DecisionListener}: added to a limiter ({@link io.tollgate.RateLimiter#onDecision}), it counts each
 * refused request, and the tokens of each allowed request and each charge, of every surface that asks that limiter
 * (the proxy, the decision API, Envoy's service, the starter's filters). The warm-up's own keys are not counted.
 *
 * <p>At most {@link #MAX_POLICIES} policies are followed (policies come from the configuration, so this is a
 * guard, not a limit anyone meets); the decisions of others are not counted. Thread-safe.
 */
public final class HeavyHitters implements DecisionListener {

    /** The keys each summary holds unless told otherwise. */
    public static final int DEFAULT_CAPACITY = 64;

    /** The most policies followed. */
    public static final int MAX_POLICIES = 1_000;

    /** What a key weighs in a report. */
    public enum Measure {
        /** Its refused requests. */
        REFUSED,
        /** The tokens charged to it: each allowed request's cost. */
        CHARGED;

        /**
         * Reads {@code refused} or {@code charged}.
         *
         * @throws IllegalArgumentException naming the value and the known ones
         */
        public static Measure of(String text) {
            return switch (Objects.requireNonNull(text, "text").toLowerCase(Locale.ROOT)) {
                case "refused" -> REFUSED;
                case "charged" -> CHARGED;
                default -> throw new IllegalArgumentException("by must be refused or charged, was '" + text + "'");
            };
        }

        /** Returns its name in a request: {@code refused} or {@code charged}. */
        public String text() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The windows reports cover, each ending now. */
    public enum Window {
        /** The last minute (60 to 70 seconds). */
        ONE_MINUTE("1m", 1),
        /** The last 15 minutes (15 to 16 minutes). */
        FIFTEEN_MINUTES("15m", 15);

        private final String text;
        final int minutes;

        Window(String text, int minutes) {
            this.text = text;
            this.minutes = minutes;
        }

        /**
         * Reads {@code 1m} or {@code 15m}.
         *
         * @throws IllegalArgumentException naming the value and the known ones
         */
        public static Window of(String text) {
            for (Window window : values()) {
                if (window.text.equals(text)) {
                    return window;
                }
            }
            throw new IllegalArgumentException("window must be 1m or 15m, was '" + text + "'");
        }

        /** Returns its name in a request: {@code 1m} or {@code 15m}. */
        public String text() {
            return text;
        }
    }

    /**
     * The heaviest keys of one policy in one window.
     *
     * @param policy the policy's name
     * @param by what a key weighs
     * @param window the window
     * @param total the weight of every key together in the window: requests refused, or tokens charged
     * @param errorBound the most any key's count may exceed what it weighed ({@code total / capacity}, rounded
     *     up); every key that weighed more than this is listed, unless {@code limit} cut the list
     * @param keys the heaviest keys, heaviest first
     * @param instances the instances whose counts the report merges, this one included
     */
    public record Report(
            String policy, Measure by, Window window, long total, long errorBound, List<TopKey> keys, int instances) {

        /** Keeps an immutable copy of the keys. */
        public Report {
            keys = List.copyOf(keys);
        }
    }

    private final TimeSource clock;
    /** Whether decisions are placed by {@link CoarseTime}: on the system clock. */
    private final boolean coarse;

    private final int capacity;
    private final Map<String, RecentTraffic[]> byPolicy = new ConcurrentHashMap<>();

    /**
     * @param clock the clock the windows follow
     * @param capacity the keys each summary holds, 8 to 4096: more keys, a tighter bound, more memory
     * @throws IllegalArgumentException if capacity is out of range
     */
    public HeavyHitters(TimeSource clock, int capacity) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.coarse = clock == TimeSource.system();
        if (capacity < 8 || capacity > 4096) {
            throw new IllegalArgumentException("capacity must be 8 to 4096, was " + capacity);
        }
        this.capacity = capacity;
    }

    /** Returns the keys each summary holds. */
    public int capacity() {
        return capacity;
    }

    /** Counts the decision or charge, unless a warm-up's. */
    @Override
    public void onDecision(DecisionEvent event) {
        if (event.warmUp()) {
            return;
        }
        if (event.tookTokens()) {
            charged(event.policy().name(), event.key(), event.cost());
        } else {
            refused(event.policy().name(), event.key());
        }
    }

    /** Counts a refused request of {@code key} under {@code policy}. */
    public void refused(String policy, String key) {
        record(policy, Measure.REFUSED, key, 1);
    }

    /** Counts {@code tokens} charged to {@code key} under {@code policy}; none is not counted. */
    public void charged(String policy, String key, long tokens) {
        if (tokens > 0) {
            record(policy, Measure.CHARGED, key, tokens);
        }
    }

    /** Returns the policies that have had a decision counted, sorted. */
    public Set<String> policies() {
        return new TreeSet<>(byPolicy.keySet());
    }

    /**
     * Returns the at most {@code limit} heaviest keys of {@code policy} in {@code window}; none for a policy
     * without counted decisions.
     *
     * @throws IllegalArgumentException if limit is not positive
     */
    public Report top(String policy, Measure by, Window window, int limit) {
        return top(policy, by, window, limit, List.of());
    }

    /**
     * Returns the at most {@code limit} heaviest keys of {@code policy} in {@code window} over this instance's
     * counts and those of other instances, as their {@link #export()} wrote them: one summary merged from all,
     * whose error bound covers every part's. Bytes that are not an export of this format are left out (and not
     * counted in {@link Report#instances()}).
     *
     * @throws IllegalArgumentException if limit is not positive
     */
    public Report top(String policy, Measure by, Window window, int limit, Collection<byte[]> others) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive, was " + limit);
        }
        List<SpaceSaving> parts = new ArrayList<>();
        RecentTraffic[] traffic = byPolicy.get(policy);
        if (traffic != null) {
            parts.add(traffic[by.ordinal()].window(window.minutes, clock.nowMicros()));
        }
        int instances = 1;
        for (byte[] other : others) {
            try {
                SpaceSaving part = Exports.find(other, policy, by, window);
                instances++;
                if (part != null) {
                    parts.add(part);
                }
            } catch (IOException notAnExport) {
                // another version's, or damaged: this instance cannot read it, and says how many it could
            }
        }
        if (parts.isEmpty()) {
            return new Report(policy, by, window, 0, 0, List.of(), instances);
        }
        SpaceSaving summary = parts.size() == 1 ? parts.get(0) : SpaceSaving.merge(parts, capacity);
        return new Report(policy, by, window, summary.total(), summary.errorBound(), summary.top(limit), instances);
    }

    /**
     * Returns every policy's summaries as they are now, both measures over both windows, in bytes that another
     * instance passes to {@link #top(String, Measure, Window, int, Collection)}: what an instance publishes to a
     * shared store. Its size grows with the policies and the keys held, at most {@code 4 x capacity} keys per
     * policy.
     */
    public byte[] export() {
        return Exports.write(byPolicy, capacity, clock.nowMicros());
    }

    /**
     * Returns the key of {@code policy} whose {@link KeyDisplay#digest digest} is {@code digest}, among the keys
     * its summaries list now in either measure and window: how a key shown masked or as a digest is named again
     * (to inspect or reset it) without being shown whole. Empty if no listed key has that digest.
     */
    public Optional<String> keyOf(String policy, String digest) {
        return keyOf(policy, digest, List.of());
    }

    /**
     * As {@link #keyOf(String, String)}, among the keys listed by this instance's counts merged with {@code
     * others}' exports: a key another instance refused can be named here.
     */
    public Optional<String> keyOf(String policy, String digest, Collection<byte[]> others) {
        for (Measure by : Measure.values()) {
            for (Window window : Window.values()) {
                for (TopKey key : top(policy, by, window, capacity, others).keys()) {
                    if (KeyDisplay.digest(key.key()).equals(digest)) {
                        return Optional.of(key.key());
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** Returns how many keys its summaries hold in all: what its memory grows with. */
    int heldKeys() {
        int held = 0;
        for (RecentTraffic[] traffic : byPolicy.values()) {
            for (RecentTraffic measure : traffic) {
                held += measure.heldKeys();
            }
        }
        return held;
    }

    private void record(String policy, Measure measure, String key, long weight) {
        RecentTraffic[] traffic = byPolicy.get(policy);
        if (traffic == null) {
            if (byPolicy.size() >= MAX_POLICIES) {
                return;
            }
            traffic = byPolicy.computeIfAbsent(policy, name -> {
                long now = clock.nowMicros();
                return new RecentTraffic[] {new RecentTraffic(capacity, now), new RecentTraffic(capacity, now)};
            });
        }
        // The system clock read for each decision costs as much as the rest of counting it: on it, the time
        // a ticker last read does (at most 10 ms late, in 10-second epochs); a test's clock is read as it is
        traffic[measure.ordinal()].add(key, weight, coarse ? CoarseTime.nowMicros() : clock.nowMicros());
    }
}
