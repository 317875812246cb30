package io.tollgate.redis;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Degradation;
import io.tollgate.InFlightSlots;
import io.tollgate.Permit;
import io.tollgate.TimeSource;
import io.tollgate.guard.GuardedRateLimiter;
import io.tollgate.guard.PermitStore;
import io.tollgate.redis.internal.TokenBucketScript;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Concurrency limits' permits in Redis: a sorted set of leases per limit and key ({@code in_flight.lua}),
 * each acquisition one script call, and a lease kept alive by renewing it while its permit is open, so that
 * the slots of an instance that dies come back within the lease. The guard ({@link GuardedRateLimiter}) races
 * each call against the time budget under the node's circuit breaker, and decides by the failure policy when
 * Redis cannot.
 *
 * <p>Thread-safe.
 */
final class RedisPermits implements PermitStore<byte[]> {

    private static final System.Logger LOG = System.getLogger(RedisRateLimiter.class.getName());

    /** How often open permits are looked at for renewal; each is renewed when a third of its lease is gone. */
    private static final long RENEWAL_TICK_MILLIS = 250;

    private static final byte[] ACQUIRE = ascii("acquire");
    private static final byte[] RELEASE = ascii("release");
    private static final byte[] RENEW = ascii("renew");
    private static final byte[] COUNT = ascii("count");
    private static final byte[] NONE = ascii("0");

    private final RedisConnector connector;
    private final BucketKeys keys;
    private final TimeSource clientClock;
    /** How long closing a permit waits for Redis to take it back: the time budget. */
    private final Duration closeWait;

    private final TokenBucketScript script = new TokenBucketScript(TokenBucketScript.IN_FLIGHT_RESOURCE);
    private final Set<LeasedPermit> open = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean renewing = new AtomicBoolean();
    private final ScheduledExecutorService renewal = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "tollgate-lease-renewal");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * @param clientClock the caller's clock for tests, or null for Redis's own time
     * @param closeWait how long {@link Permit#close()} waits for Redis to take the slot back
     */
    RedisPermits(RedisConnector connector, BucketKeys keys, TimeSource clientClock, Duration closeWait) {
        this.connector = connector;
        this.keys = keys;
        this.clientClock = clientClock;
        this.closeWait = closeWait;
    }

    @Override
    public byte[] address(String key, ConcurrencyLimit limit) {
        return keys.inFlightKey(limit.name(), key);
    }

    @Override
    public CompletableFuture<Permit> acquire(byte[] address, ConcurrencyLimit limit) {
        byte[] id = newId();
        return call(address, ACQUIRE, limit, List.of(id)).thenApply(answer -> {
            int inFlight = Math.toIntExact((Long) answer.get(1));
            return (Long) answer.get(0) == 1
                    ? lease(address, id, limit, inFlight)
                    : InFlightSlots.refused(limit, inFlight, null);
        });
    }

    @Override
    public CompletableFuture<Integer> count(byte[] address, ConcurrencyLimit limit) {
        return call(address, COUNT, limit, List.of()).thenApply(answer -> Math.toIntExact((Long) answer.get(1)));
    }

    private CompletableFuture<List<Object>> call(
            byte[] address, byte[] operation, ConcurrencyLimit limit, List<byte[]> ids) {
        RedisScriptingAsyncCommands<byte[], byte[]> redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.failedFuture(new RedisConnectionException(connector.notConnected()));
        }
        byte[][] args = new byte[4 + ids.size()][];
        args[0] = TokenBucketScript.nowArgument(clientClock);
        args[1] = operation;
        args[2] = operation == ACQUIRE ? TokenBucketScript.ascii(limit.maxInFlight()) : NONE;
        args[3] = TokenBucketScript.ascii(limit.lease().toNanos() / 1_000);
        for (int i = 0; i < ids.size(); i++) {
            args[4 + i] = ids.get(i);
        }
        try {
            return script.run(redis, address, args);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private Permit lease(byte[] address, byte[] id, ConcurrencyLimit limit, int inFlight) {
        LeasedPermit permit = new LeasedPermit(address, id, limit, inFlight);
        open.add(permit);
        if (renewing.compareAndSet(false, true)) {
            renewal.scheduleWithFixedDelay(
                    this::renewDue, RENEWAL_TICK_MILLIS, RENEWAL_TICK_MILLIS, TimeUnit.MILLISECONDS);
        }
        return permit;
    }

    /** Renews the leases a third of whose time has gone, one script call per limit and key. */
    private void renewDue() {
        try {
            long now = System.nanoTime();
            Map<List<Object>, List<LeasedPermit>> due = new LinkedHashMap<>();
            for (LeasedPermit permit : open) {
                if (now - permit.renewAtNanos >= 0) {
                    due.computeIfAbsent(
                                    List.of(new String(permit.address, StandardCharsets.ISO_8859_1), permit.limit),
                                    k -> new ArrayList<>())
                            .add(permit);
                }
            }
            for (List<LeasedPermit> group : due.values()) {
                LeasedPermit first = group.get(0);
                List<byte[]> ids = group.stream().map(permit -> permit.id).toList();
                for (LeasedPermit permit : group) {
                    permit.renewAtNanos = now + permit.limit.lease().toNanos() / 3;
                }
                call(first.address, RENEW, first.limit, ids).whenComplete((answer, failure) -> {
                    if (failure != null) {
                        LOG.log(
                                Level.DEBUG,
                                () -> "Tollgate: renewing " + ids.size() + " lease(s) of '" + first.limit.name()
                                        + "' failed; they run out unless a later renewal lands",
                                failure);
                    }
                });
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Tollgate: renewing leases failed", e);
        }
    }

    /** Stops renewing, and gives back every permit still open (waiting at most {@code maxWait}). */
    @Override
    public void close(Duration maxWait) {
        renewal.shutdownNow();
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (LeasedPermit permit : List.copyOf(open)) {
            releases.add(permit.releaseAsync().toCompletableFuture());
        }
        try {
            CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
                    .get(maxWait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // What was not given back now comes back when its lease runs out.
        }
    }

    private static byte[] newId() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return ascii(HexFormat.of().formatHex(bytes));
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /** A permit that holds a lease in Redis, renewed until it is closed. */
    private final class LeasedPermit implements Permit {

        private final byte[] address;
        private final byte[] id;
        private final ConcurrencyLimit limit;
        private final int inFlight;
        private CompletableFuture<Void> release; // guarded by this; set once, when given back
        private volatile long renewAtNanos;

        LeasedPermit(byte[] address, byte[] id, ConcurrencyLimit limit, int inFlight) {
            this.address = address;
            this.id = id;
            this.limit = limit;
            this.inFlight = inFlight;
            this.renewAtNanos = System.nanoTime() + limit.lease().toNanos() / 3;
        }

        @Override
        public boolean acquired() {
            return true;
        }

        @Override
        public ConcurrencyLimit limit() {
            return limit;
        }

        @Override
        public int inFlight() {
            return inFlight;
        }

        @Override
        public Degradation degradation() {
            return null;
        }

        @Override
        public synchronized CompletionStage<Void> releaseAsync() {
            if (release == null) {
                open.remove(this);
                release = call(address, RELEASE, limit, List.of(id)).handle((answer, failure) -> {
                    if (failure != null) {
                        LOG.log(
                                Level.DEBUG,
                                () -> "Tollgate: giving back a permit of '" + limit.name()
                                        + "' failed; its lease runs out within " + limit.lease(),
                                failure);
                    }
                    return null;
                });
            }
            return release;
        }

        @Override
        public void close() {
            try {
                releaseAsync().toCompletableFuture().get(closeWait.toNanos(), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                // The lease runs out on its own: nothing is renewing it any more.
            }
        }

        @Override
        public String toString() {
            return "Permit[" + limit.name() + ", acquired, in flight " + inFlight + "]";
        }
    }
}
