package io.tollgate.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.tollgate.Policy;
import io.tollgate.TimeSource;
import io.tollgate.TokenBucket;
import io.tollgate.guard.StoreAnswer;
import io.tollgate.guard.StoreReply;
import io.tollgate.redis.internal.NotABucketException;
import io.tollgate.redis.internal.ScriptArguments;
import io.tollgate.redis.internal.TokenBucketScript;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * Sends decisions to Redis in batches: requests that arrive while earlier ones are on their way wait in a
 * lane and go together, in arrival order, as one call of {@code token_bucket_batch.lua}, which decides each
 * of them exactly as one call per request would in that order. Requests for one hot key thus cost one
 * script call per round trip instead of one each (coalescing), and so do requests for many keys
 * (batching).
 *
 * <p>A request is sent at once when no batch of its lane is on its way, so batching adds no latency to a
 * quiet limiter; under load each batch holds what arrived during the previous round trip, at most {@link
 * #MAX_BATCH} requests, and a second batch goes before the first returns only when it is full. On Redis
 * Cluster a lane is one master, as the client last saw the topology: a batch of keys of several slots names
 * one of them to Redis, which routes the call and refuses declared keys of several slots, and passes the
 * rest as arguments (the script may touch keys of several slots as long as its node serves them). When the
 * topology has changed and the node no longer serves one of them, the script fails before writing anything,
 * and the batch's requests go again, each slot's on its own lane, where Lettuce follows Redis's redirections.
 * Elsewhere there is one lane.
 *
 * <p>Within a batch, consecutive requests for one key with the same policy and cost form a run, which the
 * script decides in one step: it replies with the bucket's debts before the run, and this class works out
 * the debts before each request of the run from them, with {@link TokenBucket}, the reference arithmetic
 * that the script repeats: each request's reply is what {@code token_bucket.lua} would have answered it.
 *
 * <p>Thread-safe.
 */
final class DecisionBatcher {

    /** The most requests in one script call: a few hundred microseconds of work in Redis. */
    static final int MAX_BATCH = 256;

    /**
     * The most batches of one lane on their way at once; when the second may go, {@link #mayStart} says. No more,
     * for order: when Redis has lost the script, {@link TokenBucketScript} resends a batch as EVAL
     * from the event loop, and with two on their way the next batch is sent only after that resend.
     */
    static final int MAX_IN_FLIGHT = 2;

    /**
     * Whether a lane's next batch may go now: when none is on its way, or, with one on its way, once as many
     * requests wait as it carries. Then the two keep Redis busy while a reply travels back, and a second batch is
     * never smaller than the one on its way: requests that arrive meanwhile wait for as many to join them, rather
     * than go as small calls that each cost Redis and the JVM their fixed part. (docs/benchmarks.md measures the
     * decisions a second of this rule against "only when full" and "at once", at 64, 256 and 1 024 in flight; the
     * sizes of the batches themselves were not measured.) A batch holds at most {@link #MAX_BATCH}, so a full one
     * waiting always may go beside one on its way.
     *
     * @param batchesOnTheirWay the lane's batches sent and not yet answered
     * @param requestsOnTheirWay the requests in them
     * @param waiting the requests queued
     */
    static boolean mayStart(int batchesOnTheirWay, int requestsOnTheirWay, int waiting) {
        return batchesOnTheirWay == 0 || (batchesOnTheirWay < MAX_IN_FLIGHT && waiting >= requestsOnTheirWay);
    }

    private final TokenBucketScript script;
    private final Supplier<RedisScriptingAsyncCommands<byte[], byte[]>> commands;
    private final ScriptArguments arguments;
    private final TimeSource clientClock;
    private final EventLoops eventLoops;
    private final Lane single = new Lane(false);
    private final Map<String, Lane> nodes = new ConcurrentHashMap<>();
    private final Map<Integer, Lane> slots = new ConcurrentHashMap<>();

    /**
     * @param arguments a policy's limits as the batch script takes them
     * @param clientClock the caller's clock, or null for Redis's own time
     */
    DecisionBatcher(
            TokenBucketScript script,
            Supplier<RedisScriptingAsyncCommands<byte[], byte[]>> commands,
            ScriptArguments arguments,
            TimeSource clientClock,
            EventLoops eventLoops) {
        this.script = script;
        this.eventLoops = eventLoops;
        this.commands = commands;
        this.arguments = arguments;
        this.clientClock = clientClock;
    }

    /** Returns the batch script. */
    TokenBucketScript script() {
        return script;
    }

    /** Returns the SHA-1 digest under which Redis caches the batch script. */
    String scriptDigest() {
        return script.digest();
    }

    /**
     * Queues a request; the stage completes with its reply, or exceptionally with a {@link
     * NotABucketException} if its key holds something else than a bucket, or with the batch's
     * failure (Redis unreachable, an error for the whole call). It has no timeout of its own: callers set
     * their budget.
     */
    CompletableFuture<StoreReply> submit(byte[] bucketKey, Policy policy, long cost) {
        return submit(bucketKey, policy, cost, false);
    }

    /**
     * Queues a charge: {@code cost} (any size) taken from the buckets whatever they hold, into debt, unless
     * that would take a limit's debt past what exact arithmetic counts, when nothing is taken; the caller
     * tells which from the reply's debts before, as for {@code token_bucket.lua}'s charge with any wait.
     * Charges travel in the batches of the decisions of their lane, one run each.
     */
    CompletableFuture<StoreReply> submitCharge(byte[] bucketKey, Policy policy, long cost) {
        return submit(bucketKey, policy, cost, true);
    }

    private CompletableFuture<StoreReply> submit(byte[] bucketKey, Policy policy, long cost, boolean charge) {
        Lane lane;
        int slot = -1;
        if (commands.get() instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
            slot = SlotHash.getSlot(bucketKey);
            RedisClusterNode master =
                    cluster.getStatefulConnection().getPartitions().getPartitionBySlot(slot);
            lane = master == null ? slotLane(slot) : nodes.computeIfAbsent(master.getNodeId(), id -> new Lane(true));
        } else {
            lane = single;
        }
        StoreAnswer result = new StoreAnswer(lane.afterReading);
        lane.add(new BatchScriptCall.Pending(bucketKey, policy, cost, charge, slot, result));
        return result;
    }

    private Lane slotLane(int slot) {
        return slots.computeIfAbsent(slot, s -> new Lane(false));
    }

    /**
     * Whether Redis refused a batch of several slots because its node no longer serves one of them (the
     * script's read found it elsewhere): nothing was written, and the requests may go again.
     */
    private static boolean servedElsewhere(Throwable failure) {
        return TokenBucketScript.unwrap(failure) instanceof RedisCommandExecutionException refused
                && refused.getMessage() != null
                && refused.getMessage().contains("non local key");
    }

    /** The requests of one lane, and how many of its batches are on their way. */
    private final class Lane {

        private final ArrayDeque<BatchScriptCall.Pending> queue = new ArrayDeque<>();
        private final boolean acrossSlots; // a cluster node's lane: its batches may hold keys of several slots
        /**
         * The event loop that read this lane's last reply, which writes its requests and reads its replies while
         * the connection lasts; null before the first reply. Requests are sent by a task of it, so that each is
         * written there and then and its answer notes when.
         */
        private volatile Executor reader;
        /** Runs a task on {@link #reader} once it has read its sockets: how the time budget asks it. */
        private volatile Executor afterReading;

        private int inFlight;
        /** The requests in this lane's batches on their way. */
        private int onTheirWay;

        private boolean deferred; // sending is scheduled on an event loop, which will take the queue

        Lane(boolean acrossSlots) {
            this.acrossSlots = acrossSlots;
        }

        void add(BatchScriptCall.Pending pending) {
            Runnable next;
            synchronized (this) {
                queue.add(pending);
                if (deferred || !mayStart()) {
                    return;
                }
                next = claim();
            }
            next.run();
        }

        /**
         * Notes that a batch came back, and sends the next if requests wait; returns the event loop that will
         * send it by a task, if this thread runs one, else null (it was sent here, or nothing waits).
         */
        private Executor sent(int size) {
            Runnable next;
            Executor loop;
            synchronized (this) {
                inFlight--;
                onTheirWay -= size;
                if (deferred || queue.isEmpty() || !mayStart()) {
                    return null;
                }
                next = claim();
                loop = deferred ? eventLoops.current() : null;
            }
            next.run();
            return loop;
        }

        /** Whether a batch may go now, under the lane's lock: see {@link DecisionBatcher#mayStart}. */
        private boolean mayStart() {
            return DecisionBatcher.mayStart(inFlight, onTheirWay, queue.size());
        }

        /**
         * Takes on sending what is queued, under the lane's lock; returns what is left to do outside it: on
         * an event loop, or once the loop that reads the lane is known, queueing the send as a task of that loop;
         * else answering the batch just sent.
         */
        private Runnable claim() {
            // Netty writes a command at once when it is sent from the connection's event loop and queues it as a
            // task when it is sent from any other thread: a batch sent straight from the event loop could
            // overtake one that another thread sent just before. So an event loop sends by a task of its own.
            // Other threads, too, once the lane's loop is known: Netty would queue their write as a task of that
            // loop anyway, and sent by a task of ours, the batch is written when the task runs, which its answers
            // note (a loop held up past a request's budget has not given Redis its time).
            Executor current = eventLoops.current();
            Executor loop = current != null ? current : reader;
            if (loop == null) {
                inFlight++;
                return dispatch()::answerWhenDone;
            }
            deferred = true;
            return () -> {
                try {
                    loop.execute(this::sendDeferred);
                } catch (RejectedExecutionException shuttingDown) {
                    sendDeferred(); // the client is closing: the call fails, and every caller hears so
                }
            };
        }

        /**
         * Sends what is queued, as a task of the event loop that found it: by the time it runs, the loop has
         * written every batch that other threads queued to it before, so this one cannot overtake them; and
         * meanwhile no other thread sends (they see {@code deferred}).
         */
        private void sendDeferred() {
            List<Batch> batches = new ArrayList<>(MAX_IN_FLIGHT);
            synchronized (this) {
                deferred = false;
                while (!queue.isEmpty() && mayStart()) {
                    inFlight++;
                    batches.add(dispatch());
                }
            }
            batches.forEach(Batch::answerWhenDone);
        }

        /**
         * Takes the next batch off the queue and hands it to Lettuce, under the lane's lock, so that batches
         * reach Redis in the order they were taken and requests for one key are decided in arrival order.
         */
        private Batch dispatch() {
            List<BatchScriptCall.Pending> members = new ArrayList<>(Math.min(queue.size(), MAX_BATCH));
            while (!queue.isEmpty() && members.size() < MAX_BATCH) {
                members.add(queue.poll());
            }
            onTheirWay += members.size();
            List<BatchScriptCall.Run> runs = new ArrayList<>();
            CompletableFuture<List<Object>> call;
            try {
                call = call(members, runs, acrossSlots);
            } catch (RuntimeException e) {
                call = CompletableFuture.failedFuture(e);
            }
            Executor loop = reader;
            if (loop != null && eventLoops.current() == loop) {
                // Written by now: Netty writes at once what its connection's own event loop sends.
                long written = System.nanoTime();
                for (BatchScriptCall.Pending member : members) {
                    member.result().sent(written);
                }
            }
            return new Batch(this, members.size(), runs, call);
        }
    }

    /** A batch on its way: its runs and the script call deciding them. */
    private final class Batch {
        private final Lane lane;
        private final int size;
        private final List<BatchScriptCall.Run> runs;
        private final CompletableFuture<List<Object>> call;

        Batch(Lane lane, int size, List<BatchScriptCall.Run> runs, CompletableFuture<List<Object>> call) {
            this.lane = lane;
            this.size = size;
            this.runs = runs;
            this.call = call;
        }

        /** Answers every caller once Redis replied; outside the lane's lock, as callers' stages run here. */
        void answerWhenDone() {
            call.whenComplete((replies, failure) -> {
                Executor loop = eventLoops.current();
                if (loop != null && lane.reader != loop) {
                    // the first reply, or the connection came back on another loop
                    lane.afterReading = EventLoops.afterReading(loop);
                    lane.reader = loop;
                }
                if (failure == null) {
                    // Every caller's answer is here now, though each is delivered only after the callers before
                    // it (and those of a batch read just before) have run: their time is not Redis's.
                    for (BatchScriptCall.Run run : runs) {
                        for (BatchScriptCall.Pending member : run.members) {
                            member.result().arrived();
                        }
                    }
                }
                Executor sending = lane.sent(size); // the next batch goes before this one's callers run
                if (sending == null) {
                    answerAll(replies, failure);
                    return;
                }
                // The next batch is sent by a task of this event loop: this batch's callers are answered by a task
                // queued behind it, so that Redis decides the next batch while they run, rather than after.
                try {
                    sending.execute(() -> answerAll(replies, failure));
                } catch (RejectedExecutionException shuttingDown) {
                    answerAll(replies, failure);
                }
            });
        }

        /** Answers every caller of the batch from Redis's replies, or with the call's failure. */
        private void answerAll(List<Object> replies, Throwable failure) {
            if (failure != null && lane.acrossSlots && servedElsewhere(failure)) {
                // In the order of the batch, which keeps each key's requests in arrival order.
                for (BatchScriptCall.Run run : runs) {
                    for (BatchScriptCall.Pending member : run.members) {
                        slotLane(member.slot()).add(member);
                    }
                }
                return;
            }
            Throwable problem = failure;
            int at = 1;
            for (BatchScriptCall.Run run : runs) {
                if (problem == null) {
                    try {
                        at = BatchScriptCall.answer(run, (Long) replies.get(0), replies, at);
                        continue;
                    } catch (RuntimeException malformed) {
                        problem = malformed; // every caller is answered, whatever came back
                    }
                }
                for (BatchScriptCall.Pending member : run.members) {
                    member.result().completeExceptionally(problem);
                }
            }
        }
    }

    /**
     * Runs the batch script: the distinct keys, the distinct policies, then the runs, those of each key
     * together in arrival order. Fills {@code runs} in the order of the script's reply. With {@code
     * acrossSlots}, keys of several slots go as arguments after the runs, the first alone as the key.
     */
    private CompletableFuture<List<Object>> call(
            List<BatchScriptCall.Pending> batch, List<BatchScriptCall.Run> runs, boolean acrossSlots) {
        RedisScriptingAsyncCommands<byte[], byte[]> redis = commands.get();
        if (redis == null) {
            throw new IllegalStateException("not connected to Redis");
        }
        BatchScriptCall.Arguments call = BatchScriptCall.arguments(batch, runs, acrossSlots, arguments, clientClock);
        return script.run(redis, call.keys(), call.args());
    }
}
