package io.tollgate.guard;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.TimeSource;
import io.tollgate.TokenBucket;
import java.lang.System.Logger.Level;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Tokens of hot keys taken from the store ahead of the requests that use them, so that those requests are
 * answered in memory: a <em>lease</em>. A key whose requests on this instance reach {@link #HOT_PER_SECOND}
 * tokens a second gets one (a key that is not hot costs one counter per request, {@link HotKeySlots}, and no
 * memory): the guard takes a slice of its bucket in one ordinary charge (so nothing is admitted
 * that the store did not grant), answers requests from it, takes the next slice before this one runs out, and
 * gives back what is left of a slice when the next one comes, when it expires ({@link #LIFE_MICROS} after it was
 * sent), when the key changes elsewhere (a reset, a refund), and on close.
 *
 * <p><b>Size.</b> A slice is what this instance used of the key in {@link #LIFE_MICROS}, at its last measured rate,
 * and never more than {@code capacity / (2 × live instances)} of the policy's smallest limit: one instance never
 * holds more than its share of half the bucket, so the others keep the rest.
 *
 * <p><b>The trade.</b> Tokens held in a lease are gone from the bucket: a request on another instance may be
 * refused while this one holds some, for at most {@link #LIFE_MICROS} after its last slice. Every token used from a
 * lease was taken from the bucket at most {@link #LIFE_MICROS} before, so a burst may pass, at most, the bucket's
 * capacity plus {@link #LIFE_MICROS} of its refill. The {@code remaining} of
 * an answer from a lease is the lease's own, a lower bound of what the bucket and the lease hold together.
 *
 * <p>Policies with calendar quotas are never leased: a token given back in another period would count against it.
 *
 * <p>Thread-safe: each lease's tokens are one atomic counter; one slice of a key is on its way at a time.
 */
final class Leases<A> {

    /** How long a slice may be used, from when it was sent: 100 ms. */
    static final long LIFE_MICROS = 100_000;

    /** The tokens a second on this instance that make a key hot. */
    static final long HOT_PER_SECOND = 1_000;

    /** The smallest slice worth a call: below it the key is answered request by request. */
    private static final long SMALLEST_SLICE = 4;

    private static final ScheduledExecutorService SWEEPS = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "tollgate-leases");
        thread.setDaemon(true);
        return thread;
    });

    private final GuardedRateLimiter<A> guard;
    private final Set<String> leasedPolicies;
    private final boolean everyPolicy;
    private final TimeSource time;
    /** Which keys may be hot: only those get a lease, and are counted one by one. */
    private final HotKeySlots hotSlots =
            new HotKeySlots(Lease.WINDOW_MICROS, HOT_PER_SECOND * Lease.WINDOW_MICROS / 1_000_000);
    /** The leases, by policy name and key: of keys that were hot lately. */
    private final Map<String, Map<String, Lease>> leases = new ConcurrentHashMap<>();
    /** How many leases there are, at most {@code maximumKeys}. */
    private final AtomicInteger count = new AtomicInteger();

    private final long maximumKeys;

    private final ScheduledFuture<?> sweeping;
    /** Slices taken, for tests and measurements. */
    private final AtomicLong slices = new AtomicLong();

    /**
     * @param leasedPolicies the names of the policies whose hot keys are leased; {@code *} leases every policy
     * @param maximumKeys the most keys with a lease at once: past it, a key that turns hot is decided by the store
     */
    Leases(GuardedRateLimiter<A> guard, Set<String> leasedPolicies, long maximumKeys) {
        this.guard = guard;
        this.leasedPolicies = Set.copyOf(leasedPolicies);
        this.everyPolicy = leasedPolicies.contains(GuardSettings.EVERY_POLICY);
        this.time = guard.time;
        this.maximumKeys = maximumKeys;
        this.sweeping = sweepEvery(this, LIFE_MICROS / 2);
    }

    /** Returns whether requests of {@code policy} may be answered from leases. */
    boolean covers(Policy policy) {
        return policy.quotas().isEmpty() && (everyPolicy || leasedPolicies.contains(policy.name()));
    }

    /**
     * Counts a request of {@code cost} for the key, and answers it from the key's lease if it holds the tokens;
     * takes the next slice when the lease runs low and the key is hot. Returns null when the lease cannot answer:
     * the store decides. {@code now} is the guard's clock, in µs.
     */
    Decision tryTake(Policy policy, String key, long cost, long now) {
        Lease lease = leaseOf(policy.name(), key);
        if (lease == null) {
            if (!hotSlots.count(policy.name(), key, cost, now) || (lease = newLease(policy.name(), key)) == null) {
                return null; // not hot: the key's requests cost one counter, and no memory
            }
        }
        lease.count(cost, now);
        long left = lease.policy == policy || lease.policy == null ? lease.take(cost, now) : -1;
        long slice = sliceOf(policy, lease);
        if (slice >= SMALLEST_SLICE && (left < 0 ? 0 : left) < slice / 2) {
            fetch(policy, key, lease, slice, now);
        }
        if (left < 0) {
            return null;
        }
        return new Decision(true, policy.limits().get(0), 0, left, 0, Math.max(0, lease.fullAtMicros - now));
    }

    private Lease leaseOf(String policyName, String key) {
        Map<String, Lease> ofPolicy = leases.get(policyName);
        return ofPolicy == null ? null : ofPolicy.get(key);
    }

    /** Returns the key's lease, new unless another request made it first; null if there are too many. */
    private Lease newLease(String policyName, String key) {
        if (count.get() >= maximumKeys) {
            return null;
        }
        Map<String, Lease> ofPolicy = leases.computeIfAbsent(policyName, name -> new ConcurrentHashMap<>());
        Lease made = new Lease(policyName, key);
        Lease lease = ofPolicy.putIfAbsent(key, made);
        if (lease == null) {
            count.incrementAndGet();
            return made;
        }
        return lease;
    }

    /** Returns the slice this instance takes of the key: its use in a lease's life, within its share. */
    private long sliceOf(Policy policy, Lease lease) {
        long perSecond = lease.perSecond;
        if (perSecond < HOT_PER_SECOND) {
            return 0;
        }
        long share = Long.MAX_VALUE;
        for (Limit limit : policy.limits()) {
            share = Math.min(share, limit.capacity() / (2L * guard.instances()));
        }
        return Math.min(share, perSecond * LIFE_MICROS / 1_000_000);
    }

    /** Takes a slice of {@code slice} tokens from the store, unless one is on its way or the key waits. */
    private void fetch(Policy policy, String key, Lease lease, long slice, long now) {
        if (now < lease.notBeforeMicros || !lease.fetching.compareAndSet(false, true)) {
            return;
        }
        int generation = lease.generation;
        A address = guard.store.address(key, policy);
        if (guard.breakers.of(address).state() != CircuitBreaker.State.CLOSED || guard.store.unavailable() != null) {
            lease.fetching.set(false);
            return; // the requests find out on their own path, and the failure policy decides them
        }
        CompletableFuture<StoreReply> reply;
        try {
            reply = guard.store.charge(address, policy, slice, 0, true);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((answer, failure) -> {
            try {
                taken(policy, key, lease, slice, now, generation, answer, failure);
            } finally {
                lease.fetching.set(false);
            }
        });
    }

    private void taken(
            Policy policy,
            String key,
            Lease lease,
            long slice,
            long sentMicros,
            int generation,
            StoreReply answer,
            Throwable failure) {
        long now = time.nowMicros();
        if (failure != null) {
            lease.notBeforeMicros = now + LIFE_MICROS;
            guard.settings
                    .log()
                    .log(Level.DEBUG, () -> "Tollgate: taking a lease of key '" + key + "' failed", failure);
            return;
        }
        boolean granted = answer.decision(policy, slice, 0).allowed();
        if (guard.changesHeard.heardSince(policy.name(), key, sentMicros)) {
            changedMeanwhile(policy, key, granted, slice);
            return;
        }
        long[] debtsAfter = answer.debtsAfter(policy, slice, granted);
        long untilFull = 0;
        long left = Long.MAX_VALUE;
        for (int i = 0; i < policy.limits().size(); i++) {
            Limit limit = policy.limits().get(i);
            untilFull = Math.max(untilFull, TokenBucket.untilFullMicros(debtsAfter[i], limit));
            left = Math.min(left, TokenBucket.remaining(debtsAfter[i], limit));
        }
        if (!answer.superseded()) {
            guard.local.learn(policy, key, debtsAfter, answer.nowMicros(), sentMicros, now);
        }
        if (!granted || left < slice * guard.instances()) {
            // The bucket is low: no next slice for a while (requests ask the store one by one), so that tokens the
            // others could use do not sit here while their requests are refused
            lease.notBeforeMicros = sentMicros + LIFE_MICROS;
        }
        if (!granted) {
            return;
        }
        synchronized (lease) {
            if (lease.generation != generation) {
                changedMeanwhile(policy, key, true, slice);
                return;
            }
            slices.incrementAndGet();
            // What is left of the last slice goes back: every token a lease holds was taken at most LIFE_MICROS ago
            long leftover = lease.tokens.getAndSet(slice);
            Policy previous = lease.policy;
            lease.policy = policy;
            lease.expiresAtMicros = sentMicros + LIFE_MICROS;
            lease.fullAtMicros = now + untilFull;
            if (leftover > 0 && previous != null) {
                guard.adjustments.giveBack(key, previous, leftover);
            }
        }
        if (leaseOf(lease.policyName, lease.key) != lease) {
            giveBack(lease); // the sweep dropped the lease while the slice was on its way
        }
    }

    /**
     * A slice came back after the key changed (a reset, a refund): it may have been taken before a reset, from a
     * bucket that is gone, so it is not used; given back, it lands in the new bucket as no more than it held.
     */
    private void changedMeanwhile(Policy policy, String key, boolean granted, long slice) {
        if (granted) {
            guard.adjustments.giveBack(key, policy, slice);
        }
    }

    /** Gives back the tokens of the key's lease, and drops any slice on its way: the key changed elsewhere. */
    void forget(String policyName, String key) {
        Lease lease = leaseOf(policyName, key);
        if (lease != null) {
            synchronized (lease) {
                lease.generation++;
                giveBack(lease);
            }
        }
    }

    /**
     * Gives back every lease's tokens and stops the sweeps; returns once the store took them, or after {@code
     * waitMicros}: what the store did not take by then stays charged there, as any debt does, until it refills.
     */
    void close(long waitMicros) {
        sweeping.cancel(false);
        List<CompletableFuture<?>> given = new ArrayList<>();
        for (Map<String, Lease> ofPolicy : leases.values()) {
            for (Lease lease : ofPolicy.values()) {
                given.add(giveBack(lease));
            }
        }
        try {
            CompletableFuture.allOf(given.toArray(CompletableFuture[]::new)).get(waitMicros, TimeUnit.MICROSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // given back as far as the store took it in time
        }
    }

    /** Gives back the tokens of leases that expired, and drops the leases of keys nobody asked for lately. */
    void sweep() {
        long now = time.nowMicros();
        for (Map<String, Lease> ofPolicy : leases.values()) {
            for (Lease lease : ofPolicy.values()) {
                if (now >= lease.expiresAtMicros) {
                    giveBack(lease);
                }
                if (lease.idle(now) && ofPolicy.remove(lease.key, lease)) {
                    count.decrementAndGet();
                    giveBack(lease); // a slice that arrived in between
                }
            }
        }
    }

    private CompletableFuture<?> giveBack(Lease lease) {
        long held = lease.tokens.getAndSet(0);
        Policy policy = lease.policy;
        if (held <= 0 || policy == null) {
            return CompletableFuture.completedFuture(null);
        }
        return guard.adjustments.giveBack(lease.key, policy, held);
    }

    /** Returns how many tokens this instance holds in the key's lease now; for tests. */
    long held(String policyName, String key) {
        Lease lease = leaseOf(policyName, key);
        return lease == null ? 0 : lease.tokens.get();
    }

    /** Returns how many slices this instance has taken; for tests and measurements. */
    long slicesTaken() {
        return slices.get();
    }

    private static ScheduledFuture<?> sweepEvery(Leases<?> leases, long periodMicros) {
        WeakReference<Leases<?>> held = new WeakReference<>(leases);
        ScheduledFuture<?>[] task = new ScheduledFuture<?>[1];
        synchronized (task) {
            task[0] = SWEEPS.scheduleWithFixedDelay(
                    () -> {
                        Leases<?> alive = held.get();
                        if (alive != null) {
                            alive.sweep();
                        } else {
                            synchronized (task) {
                                task[0].cancel(false);
                            }
                        }
                    },
                    periodMicros,
                    periodMicros,
                    TimeUnit.MICROSECONDS);
            return task[0];
        }
    }
}
