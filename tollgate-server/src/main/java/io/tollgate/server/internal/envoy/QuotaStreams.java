package io.tollgate.server.internal.envoy;

import com.google.protobuf.UInt32Value;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.server.internal.access.CallerEvents;
import io.tollgate.server.internal.access.Callers;
import io.tollgate.server.internal.envoy.proto.BucketId;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaResponse.BucketAction;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaServiceGrpc;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaUsageReports;
import io.tollgate.server.internal.envoy.proto.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.tollgate.server.internal.envoy.proto.RateLimitStrategy;
import io.tollgate.server.internal.envoy.proto.TokenBucket;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Envoy's rate limit quota service, {@code StreamRateLimitQuotas}: each Envoy keeps a stream open and reports,
 * every interval, how many requests of each bucket it let through and refused; the service answers each report
 * with an assignment per bucket, a slice of the bucket's tokens taken from the limiter (Redis, shared by every
 * instance of the server) for the Envoy to spend in memory. A slice is the Envoy's demand over the next interval
 * (its report, allowed and refused, plus a quarter), or what the bucket still holds if less; an Envoy that gets
 * nothing is told to deny all until its next report. So Envoys on one bucket together admit what the bucket
 * grants, in proportion to what each asks, never more.
 *
 * <p>Each assignment is a token bucket that starts full and does not refill within its time to live, and each
 * differs from the last (its fill interval is a day plus a sequence number of milliseconds), so that Envoy
 * replaces the last one rather than extending it. What an Envoy did not spend of a slice it replaces is not given
 * back: the bucket under-admits by at most that. A bucket a stream reports no requests of for {@link
 * QuotaSettings#abandonAfter} is abandoned on that stream; a stream that ends forgets its buckets, and a new one
 * starts afresh.
 *
 * <p>Thread-safe: each stream's answers are sent one at a time.
 */
final class QuotaStreams extends RateLimitQuotaServiceGrpc.RateLimitQuotaServiceImplBase implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /**
     * The most buckets one stream may report: each costs the server a little memory and takes a slice, so a client
     * that names bucket after bucket is stopped rather than left to grow the server or drain many buckets.
     */
    static final int MAX_BUCKETS_PER_STREAM = 10_000;

    /** The base of every assignment's fill interval: far beyond any time to live, so a slice never refills. */
    private static final Duration NEVER_REFILLED = Duration.ofDays(1);

    private static final ScheduledExecutorService SWEEPS = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "tollgate-quota-abandon");
        thread.setDaemon(true);
        return thread;
    });

    private final RateLimiter limiter;
    private final Supplier<EnvoyService.Setup> setup;
    private final Supplier<Callers> callers;
    private final CallerEvents events;
    private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
    /** How many streams report each bucket now, by key: an Envoy's first slice is its share of an interval. */
    private final Map<String, Integer> subscribers = new ConcurrentHashMap<>();
    /** Makes each assignment differ from the last one. */
    private final AtomicLong sequence = new AtomicLong();

    private final java.util.concurrent.ScheduledFuture<?> abandoning;

    QuotaStreams(
            RateLimiter limiter, Supplier<EnvoyService.Setup> setup, Supplier<Callers> callers, CallerEvents events) {
        this.limiter = limiter;
        this.setup = setup;
        this.callers = callers;
        this.events = events;
        this.abandoning = SWEEPS.scheduleWithFixedDelay(this::abandonIdle, 1, 1, TimeUnit.SECONDS);
    }

    @Override
    public StreamObserver<RateLimitQuotaUsageReports> streamRateLimitQuotas(
            StreamObserver<RateLimitQuotaResponse> answers) {
        Callers named = callers.get();
        Callers.Caller caller = null;
        if (named.required()) {
            caller = CallerMetadata.caller(named);
            if (caller == null) {
                String detail = CallerMetadata.unauthenticated("the rate limit quota service");
                events.unauthenticated("envoy-quota", detail);
                answers.onError(Status.UNAUTHENTICATED.withDescription(detail).asRuntimeException());
                Stream refused = new Stream(answers, null);
                refused.ended = true; // what the refused caller sends is dropped
                return refused;
            }
        }
        Stream stream = new Stream(answers, caller);
        streams.add(stream);
        return stream;
    }

    /**
     * Stops abandoning buckets and ends every stream, so that a stopping server does not wait for streams that
     * never end on their own: each Envoy opens its next stream, to another instance or to this one restarted.
     */
    @Override
    public void close() {
        abandoning.cancel(false);
        for (Stream stream : streams) {
            stream.onCompleted();
        }
    }

    /** Returns the limiter's key of a bucket: its domain and its entries, sorted, as {@code k=v} pairs. */
    static String key(String domain, BucketId id) {
        StringBuilder key = new StringBuilder(domain).append(':');
        String separator = "";
        for (Map.Entry<String, String> entry : new TreeMap<>(id.getBucketMap()).entrySet()) {
            key.append(separator).append(entry.getKey()).append('=').append(entry.getValue());
            separator = ",";
        }
        return key.toString();
    }

    private void abandonIdle() {
        try {
            long now = System.nanoTime();
            for (Stream stream : streams) {
                stream.abandonIdle(now);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "abandoning idle quota buckets failed", e);
        }
    }

    /** One bucket on one stream. */
    private static final class Subscription {
        private final BucketId id;
        private final String key;
        /** When the stream last reported a request of it, in {@link System#nanoTime()}. */
        private volatile long activeNanos = System.nanoTime();
        /** Whether it was given an assignment yet. */
        private volatile boolean assigned;

        Subscription(BucketId id, String key) {
            this.id = id;
            this.key = key;
        }
    }

    /** One Envoy's stream: its domain, once the first report named it, and its buckets. */
    private final class Stream implements StreamObserver<RateLimitQuotaUsageReports> {
        private final StreamObserver<RateLimitQuotaResponse> answers;
        private final Callers.Caller caller;
        private final Map<String, Subscription> buckets = new ConcurrentHashMap<>();
        private volatile String domain;
        private volatile boolean ended;

        Stream(StreamObserver<RateLimitQuotaResponse> answers, Callers.Caller caller) {
            this.answers = answers;
            this.caller = caller;
        }

        @Override
        public void onNext(RateLimitQuotaUsageReports reports) {
            if (ended) {
                return;
            }
            try {
                List<CompletableFuture<BucketAction>> actions = new ArrayList<>();
                for (BucketQuotaUsage usage : read(reports)) {
                    actions.add(assign(usage));
                }
                CompletableFuture.allOf(actions.toArray(CompletableFuture[]::new))
                        .whenComplete((done, failure) -> {
                            if (failure != null) {
                                fail(Status.INTERNAL.withDescription("the rate limiter failed; see the server's log"));
                                LOG.log(Level.ERROR, "assigning Envoy quota failed", failure);
                                return;
                            }
                            RateLimitQuotaResponse.Builder response = RateLimitQuotaResponse.newBuilder();
                            actions.forEach(action -> response.addBucketAction(action.join()));
                            send(response.build());
                        });
            } catch (StatusRuntimeException e) {
                fail(e.getStatus());
            }
        }

        /** Checks a report and subscribes its new buckets; returns the usages to answer, in order. */
        private List<BucketQuotaUsage> read(RateLimitQuotaUsageReports reports) {
            if (domain == null) {
                if (reports.getDomain().isBlank()) {
                    throw Status.INVALID_ARGUMENT
                            .withDescription("the first report of a stream must name its domain")
                            .asRuntimeException();
                }
                domain = reports.getDomain();
            }
            QuotaSettings quota = setup.get().quota();
            if (quota == null) {
                throw Status.FAILED_PRECONDITION
                        .withDescription("this server hands out no quota: its file has no envoy.quota section")
                        .asRuntimeException();
            }
            int added = 0;
            for (BucketQuotaUsage usage : reports.getBucketQuotaUsagesList()) {
                added += buckets.containsKey(key(domain, usage.getBucketId())) ? 0 : 1;
            }
            if (buckets.size() + added > MAX_BUCKETS_PER_STREAM) {
                throw Status.RESOURCE_EXHAUSTED
                        .withDescription("a stream may report at most " + MAX_BUCKETS_PER_STREAM + " buckets")
                        .asRuntimeException();
            }
            for (BucketQuotaUsage usage : reports.getBucketQuotaUsagesList()) {
                if (usage.getBucketId().getBucketCount() == 0) {
                    throw Status.INVALID_ARGUMENT
                            .withDescription("a bucket id needs at least one entry")
                            .asRuntimeException();
                }
                String key = key(domain, usage.getBucketId());
                String forbidden = caller == null ? null : caller.forbids(quota.policy(), key);
                if (forbidden != null) {
                    events.forbidden(caller, "envoy-quota", forbidden);
                    throw Status.PERMISSION_DENIED.withDescription(forbidden).asRuntimeException();
                }
            }
            if (caller != null) {
                events.served(caller, "envoy-quota");
            }
            return reports.getBucketQuotaUsagesList();
        }

        /** Takes the usage's next slice from the limiter; completes with the action that hands it out. */
        private CompletableFuture<BucketAction> assign(BucketQuotaUsage usage) {
            QuotaSettings quota = setup.get().quota();
            String key = key(domain, usage.getBucketId());
            Subscription bucket = buckets.computeIfAbsent(key, k -> {
                subscribers.merge(k, 1, Integer::sum);
                return new Subscription(usage.getBucketId(), k);
            });
            long asked = usage.getNumRequestsAllowed() + usage.getNumRequestsDenied();
            if (asked > 0) {
                bucket.activeNanos = System.nanoTime();
            }
            long want = bucket.assigned
                    ? demand(usage, asked, quota)
                    : Math.max(1, quota.refillPerInterval() / subscribers.getOrDefault(key, 1));
            bucket.assigned = true;
            long slice = Math.min(Math.max(1, want), quota.largestSlice());
            return take(key, quota.policy(), slice).thenApply(taken -> action(bucket.id, taken, quota));
        }

        /** The tokens the usage asks for over the next interval: its rate, and a quarter more. */
        private static long demand(BucketQuotaUsage usage, long asked, QuotaSettings quota) {
            long interval = quota.reportInterval().toNanos();
            long elapsed = usage.hasTimeElapsed()
                    ? usage.getTimeElapsed().getSeconds() * 1_000_000_000L
                            + usage.getTimeElapsed().getNanos()
                    : interval;
            double perInterval = asked * (interval / (double) Math.max(1, elapsed));
            return (long) Math.ceil(perInterval * 1.25);
        }

        private void abandonIdle(long nowNanos) {
            QuotaSettings quota = setup.get().quota();
            if (quota == null || ended) {
                return;
            }
            RateLimitQuotaResponse.Builder abandoned = RateLimitQuotaResponse.newBuilder();
            for (Subscription bucket : buckets.values()) {
                if (nowNanos - bucket.activeNanos >= quota.abandonAfter().toNanos()
                        && buckets.remove(bucket.key, bucket)) {
                    unsubscribe(bucket.key);
                    abandoned.addBucketAction(BucketAction.newBuilder()
                            .setBucketId(bucket.id)
                            .setAbandonAction(BucketAction.AbandonAction.getDefaultInstance()));
                }
            }
            if (abandoned.getBucketActionCount() > 0) {
                send(abandoned.build());
            }
        }

        private void send(RateLimitQuotaResponse response) {
            synchronized (answers) {
                if (!ended) {
                    answers.onNext(response);
                }
            }
        }

        private void fail(Status status) {
            synchronized (answers) {
                if (!ended) {
                    end();
                    answers.onError(status.asRuntimeException());
                }
            }
        }

        @Override
        public void onError(Throwable failure) {
            end(); // the Envoy went away, or cancelled: it starts afresh on its next stream
        }

        @Override
        public void onCompleted() {
            synchronized (answers) {
                if (!ended) {
                    end();
                    answers.onCompleted();
                }
            }
        }

        private void end() {
            ended = true;
            streams.remove(this);
            for (String key : buckets.keySet()) {
                if (buckets.remove(key) != null) {
                    unsubscribe(key);
                }
            }
        }
    }

    private void unsubscribe(String key) {
        subscribers.computeIfPresent(key, (k, count) -> count > 1 ? count - 1 : null);
    }

    /**
     * Takes {@code slice} tokens of the key, or, if the bucket holds fewer, what it holds; completes with what was
     * taken, 0 if nothing.
     */
    private CompletableFuture<Long> take(String key, Policy policy, long slice) {
        return limiter.tryAcquireAsync(key, policy, slice).toCompletableFuture().thenCompose(decision -> {
            if (decision.allowed()) {
                return CompletableFuture.completedFuture(slice);
            }
            long left = decision.degraded() ? 0 : Math.min(decision.remaining(), slice - 1);
            if (left < 1) {
                return CompletableFuture.completedFuture(0L);
            }
            return limiter.tryAcquireAsync(key, policy, left)
                    .toCompletableFuture()
                    .thenApply(Decision::allowed)
                    .thenApply(allowed -> allowed ? left : 0L);
        });
    }

    /** The action that hands {@code tokens} to the Envoy: a token bucket of them, or deny all if none. */
    private BucketAction action(BucketId id, long tokens, QuotaSettings quota) {
        BucketAction.QuotaAssignmentAction.Builder assignment = BucketAction.QuotaAssignmentAction.newBuilder();
        if (tokens == 0) {
            // Until the next report, which may find tokens again
            assignment
                    .setAssignmentTimeToLive(duration(quota.reportInterval()))
                    .setRateLimitStrategy(
                            RateLimitStrategy.newBuilder().setBlanketRule(RateLimitStrategy.BlanketRule.DENY_ALL));
        } else {
            Duration fill = NEVER_REFILLED.plusMillis(sequence.incrementAndGet() % 86_400_000L);
            assignment
                    .setAssignmentTimeToLive(duration(quota.assignmentTimeToLive()))
                    .setRateLimitStrategy(RateLimitStrategy.newBuilder()
                            .setTokenBucket(TokenBucket.newBuilder()
                                    .setMaxTokens((int) tokens)
                                    .setTokensPerFill(UInt32Value.of((int) tokens))
                                    .setFillInterval(duration(fill))));
        }
        return BucketAction.newBuilder()
                .setBucketId(id)
                .setQuotaAssignmentAction(assignment)
                .build();
    }

    private static com.google.protobuf.Duration duration(Duration duration) {
        return com.google.protobuf.Duration.newBuilder()
                .setSeconds(duration.getSeconds())
                .setNanos(duration.getNano())
                .build();
    }
}
