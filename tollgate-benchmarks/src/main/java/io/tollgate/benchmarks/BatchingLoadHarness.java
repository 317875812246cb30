package io.tollgate.benchmarks;

import io.github.bucket4j.BucketConfiguration;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.redis.internal.ScriptArguments;
import io.tollgate.redis.internal.TokenBucketScript;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisServer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Throughput and latency against in-flight requests, one hot key and 10 000 keys, for Tollgate with and
 * without batching, Bucket4j's Lettuce proxy manager with and without its batching optimization, and Redisson's
 * {@code RRateLimiter}, all against one redis-server that the harness starts, in one run; then redis-benchmark's EVALSHA and SET
 * ceilings. Every limit lets every request pass (capacity 10^9 refilled 1 per second), so every decision
 * writes. Bucket4j's bucket proxies are kept per key, as its batching needs one proxy per key to merge on.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.BatchingLoadHarness
 * [seconds per point] [plot.svg]}. Prints Markdown tables for docs/benchmarks.md and writes two plots ({@link
 * BatchingCharts}): throughput beside Redis's own ceilings, in {@code plot.svg}, and latency, in {@code
 * plot-latency.svg}. With
 * the single argument {@code ceilings} it measures only what Redis does with batches of script calls. With
 * {@code -Dharness.subjects=NAME;NAME} (such as {@code "Tollgate, batching;Redisson RRateLimiter"}, or {@code
 * "Tollgate, batching;Tollgate, batching, counted"} for the cost of counting who is limited) it measures those
 * limiters only, without ceilings or plot: a quick before-and-after comparison of a change; {@code
 * -Dharness.inFlight=64,256} measures those numbers of requests in flight only. With {@code cluster [seconds per point]} it
 * measures Tollgate with batching over 10 000 keys on a standalone redis-server, on a Redis Cluster of one
 * master and on one of three, all started by the harness: the Redis processor time per decision, summed over
 * the masters, is the figure that says how a cluster scales where each master has a core of its own.
 */
public final class BatchingLoadHarness {

    private static final long CAPACITY = RedisLoadHarness.CAPACITY;
    private static final Rate RATE = RedisLoadHarness.RATE;
    private static final Policy POLICY = RedisLoadHarness.POLICY;
    private static final BucketConfiguration BUCKET4J = RedisLoadHarness.BUCKET4J;
    static final int[] IN_FLIGHT = {16, 64, 256, 1024};
    static final int[] KEYS = {1, 10_000};
    private static final int CEILING_BATCH = 128;

    private BatchingLoadHarness() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("cluster")) {
            cluster(args.length > 1 ? Integer.parseInt(args[1]) : 5);
            return;
        }
        if (args.length > 0 && args[0].equals("ceilings")) {
            try (RedisServer redis = RedisServer.start()) {
                batchCeilings(redis);
            }
            return;
        }
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        Path plot = Path.of(args.length > 1 ? args[1] : "tollgate-benchmarks/target/batching.svg");
        Map<String, Function<RedisServer, BatchingSubjects.Subject>> subjects = new LinkedHashMap<>();
        subjects.put("Tollgate, batching", redis -> BatchingSubjects.tollgate(redis, true));
        subjects.put("Tollgate, unbatched", redis -> BatchingSubjects.tollgate(redis, false));
        subjects.put(
                "Tollgate, leases",
                redis -> BatchingSubjects.tollgate(
                        RedisRateLimiter.builder().uri(redis.uri()).leases(POLICY.name()), true));
        subjects.put(
                "Tollgate, batching, counted",
                redis -> BatchingSubjects.tollgate(RedisRateLimiter.builder().uri(redis.uri()), true, true));
        subjects.put("Bucket4j, batching", redis -> BatchingSubjects.bucket4j(redis, true));
        subjects.put("no limiter: the harness alone", redis -> BatchingSubjects.none());
        subjects.put("Bucket4j (CAS)", redis -> BatchingSubjects.bucket4j(redis, false));
        subjects.put("Redisson RRateLimiter", BatchingSubjects::redisson);
        // e.g. "Tollgate, batching;Redisson RRateLimiter": a quick comparison, without ceilings or plot
        String only = System.getProperty("harness.subjects");
        if (only != null) {
            List<String> chosen = List.of(only.split(";"));
            subjects.keySet().removeIf(name -> !chosen.contains(name));
        } else {
            subjects.remove("Tollgate, batching, counted"); // the cost of counting who is limited: asked for by name
        }
        String chosenInFlight = System.getProperty("harness.inFlight");
        int[] inFlight = chosenInFlight == null
                ? IN_FLIGHT
                : Arrays.stream(chosenInFlight.split(","))
                        .mapToInt(Integer::parseInt)
                        .toArray();
        Map<String, RedisLoadHarness.Result[][]> results = new LinkedHashMap<>();
        Map<String, Double> ceilings;
        try (RedisServer redis = RedisServer.start()) {
            System.out.println("redis " + redis.info("redis_version") + " on port " + redis.port() + ", "
                    + Runtime.getRuntime().availableProcessors() + " cores, " + seconds + " s per point");
            for (Map.Entry<String, Function<RedisServer, BatchingSubjects.Subject>> subject : subjects.entrySet()) {
                warmUp(redis, subject.getValue());
            }
            System.out.println();
            System.out.println(RedisLoadHarness.TABLE_HEADER);
            for (int k = 0; k < KEYS.length; k++) {
                for (int f = 0; f < inFlight.length; f++) {
                    for (Map.Entry<String, Function<RedisServer, BatchingSubjects.Subject>> subject :
                            subjects.entrySet()) {
                        redis.command("FLUSHALL");
                        try (BatchingSubjects.Subject limiter =
                                subject.getValue().apply(redis)) {
                            RedisLoadHarness.Result result =
                                    RedisLoadHarness.load(limiter::decide, KEYS[k], inFlight[f], seconds, redis);
                            System.out.println(result.row(subject.getKey(), KEYS[k], inFlight[f]));
                            results.computeIfAbsent(
                                            subject.getKey(),
                                            s -> new RedisLoadHarness.Result[KEYS.length][inFlight.length])[k][f] = result;
                        }
                    }
                }
            }
            if (only != null) {
                return; // a quick comparison: no ceilings, no plot
            }
            System.out.println();
            ceilings = RedisLoadHarness.ceiling(redis);
            System.out.println();
            batchCeilings(redis);
        }
        Files.writeString(plot, BatchingCharts.throughput(results, ceilings, inFlight), StandardCharsets.UTF_8);
        Path latencyPlot = BatchingCharts.latencyPath(plot);
        Files.writeString(latencyPlot, BatchingCharts.latency(results, inFlight), StandardCharsets.UTF_8);
        System.out.println();
        System.out.println("plots written to " + plot + " and " + latencyPlot);
    }

    /** Where the buckets live for {@link #cluster}: the masters to measure, and how the limiter reaches them. */
    private record Deployment(
            String name, List<RedisServer> masters, AutoCloseable owner, RedisRateLimiter.Builder target)
            implements AutoCloseable {

        static Deployment standalone() {
            RedisServer redis = RedisServer.start();
            return new Deployment(
                    "standalone",
                    List.of(redis),
                    redis,
                    RedisRateLimiter.builder().uri(redis.uri()));
        }

        static Deployment cluster(int masters) {
            RedisCluster cluster = RedisCluster.start(masters);
            return new Deployment(
                    "Cluster, " + masters + (masters == 1 ? " master" : " masters"),
                    cluster.masters(),
                    cluster,
                    RedisRateLimiter.builder().clusterUris(cluster.uris()));
        }

        BatchingSubjects.Subject tollgate() {
            return BatchingSubjects.tollgate(target, true);
        }

        void flush() {
            masters.forEach(master -> master.command("FLUSHALL"));
        }

        @Override
        public void close() throws Exception {
            owner.close();
        }
    }

    /** Tollgate with batching, 10 000 keys, on standalone Redis and on clusters of one and three masters. */
    private static void cluster(int seconds) throws Exception {
        System.out.println(Runtime.getRuntime().availableProcessors() + " cores, " + seconds + " s per point");
        System.out.println();
        System.out.println(RedisLoadHarness.TABLE_HEADER.replaceFirst("limiter", "Tollgate, batching, on"));
        List<Supplier<Deployment>> deployments =
                List.of(Deployment::standalone, () -> Deployment.cluster(1), () -> Deployment.cluster(3));
        for (Supplier<Deployment> opening : deployments) {
            try (Deployment deployment = opening.get()) {
                try (BatchingSubjects.Subject warm = deployment.tollgate()) {
                    RedisLoadHarness.load(warm::decide, 10_000, 256, 5, deployment.masters());
                }
                for (int inFlight : new int[] {64, 256, 1024}) {
                    deployment.flush();
                    try (BatchingSubjects.Subject limiter = deployment.tollgate()) {
                        RedisLoadHarness.Result result =
                                RedisLoadHarness.load(limiter::decide, 10_000, inFlight, seconds, deployment.masters());
                        System.out.println(result.row(deployment.name(), 10_000, inFlight));
                    }
                }
            }
        }
    }

    /**
     * What Redis does with script calls of {@value #CEILING_BATCH} distinct random keys out of 10 000 and
     * nothing else: Tollgate's batch script (each key a run of one request), and two scripts that only read
     * and write each key, the least any script keeping one bucket per key must do. One connection keeps
     * four calls in flight for ten seconds; Redis's own processor time per key is reported beside.
     */
    private static void batchCeilings(RedisServer redis) throws Exception {
        byte[] limits = new ScriptArguments(null).limits(POLICY);
        ByteBuffer runs = ByteBuffer.allocate(ScriptArguments.PACKED_RUN_BYTES * CEILING_BATCH);
        for (int i = 0; i < CEILING_BATCH; i++) {
            ScriptArguments.putRun(runs, 1, false, 1, 1); // each key a run of one request, as the limiter packs it
        }
        String bucket = String.format( // a bucket's size
                "%d|%s|%d", 1_700_000_000_000_000L, new String(limits, StandardCharsets.US_ASCII), 1);
        Map<String, byte[][]> scripts = new LinkedHashMap<>();
        scripts.put("token_bucket_batch.lua", new byte[][] {
            new TokenBucketScript(TokenBucketScript.BATCH_RESOURCE).text().getBytes(StandardCharsets.UTF_8),
            bytes(""),
            bytes("1"),
            limits,
            runs.array()
        });
        // The same, as a batch of keys of several slots on one Redis Cluster master sends it: the keys follow
        // the runs as arguments, and the script reads them one by one. Standalone Redis runs it alike.
        String clusterForm = "token_bucket_batch.lua, keys as arguments (the Redis Cluster form)";
        scripts.put(clusterForm, scripts.get("token_bucket_batch.lua"));
        // What the batch script does to a bucket beside reading and writing it, without its arithmetic: find
        // the time and the debt in the stored string, format the new one, reply with a number per key.
        scripts.put(
                "one MGET, then parse, format and SET ... PX each bucket",
                new byte[][] {bytes("""
                local values = redis.call('MGET', unpack(KEYS))
                local middle = '|' .. ARGV[2] .. '|'
                local prefix = ARGV[1] .. middle
                local reply = {}
                for i = 1, #KEYS do
                  local stored, d = values[i], 0
                  if stored then
                    local s, e = string.find(stored, middle, 1, true)
                    local t = tonumber(string.sub(stored, 1, s - 1))
                    d = tonumber(string.sub(stored, e + 1))
                  end
                  reply[i] = d
                  redis.call('SET', KEYS[i], string.format('%s%d', prefix, d + 1), 'PX', 3600000)
                end
                return reply"""), bytes("1700000000000000"), limits});
        scripts.put("GET, then SET ... PX, for each key", new byte[][] {bytes("""
                for i = 1, #KEYS do
                  redis.call('GET', KEYS[i])
                  redis.call('SET', KEYS[i], ARGV[1], 'PX', 3600000)
                end"""), bytes(bucket)});
        scripts.put("one MGET, then SET ... PX for each key", new byte[][] {bytes("""
                redis.call('MGET', unpack(KEYS))
                for i = 1, #KEYS do
                  redis.call('SET', KEYS[i], ARGV[1], 'PX', 3600000)
                end"""), bytes(bucket)});
        System.out.println("| script, " + CEILING_BATCH + " random keys of 10 000 per call, 4 calls in flight"
                + " | keys/s | Redis CPU µs per key |");
        System.out.println("| --- | --- | --- |");
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
            for (Map.Entry<String, byte[][]> script : scripts.entrySet()) {
                redis.command("FLUSHALL");
                byte[][] parts = script.getValue();
                String digest = connection.sync().scriptLoad(parts[0]);
                byte[][] args = java.util.Arrays.copyOfRange(parts, 1, parts.length);
                boolean keysAsArguments = script.getKey().equals(clusterForm);
                callScript(connection, digest, args, keysAsArguments, 3); // warm-up
                RedisLoadHarness.Usage before = RedisLoadHarness.Usage.of(redis);
                long keys = callScript(connection, digest, args, keysAsArguments, 10);
                RedisLoadHarness.Usage spent = RedisLoadHarness.Usage.of(redis).minus(before);
                System.out.printf(
                        Locale.ROOT,
                        "| %s | %,.0f | %.2f |%n",
                        script.getKey(),
                        keys / 10.0,
                        spent.per(keys).redisCpu());
            }
        } finally {
            client.shutdown();
        }
    }

    /**
     * Keeps four calls of the script in flight for {@code seconds}; returns the keys decided. With {@code
     * keysAsArguments} the keys follow {@code args}, and only the first is declared.
     */
    private static long callScript(
            StatefulRedisConnection<byte[], byte[]> connection,
            String digest,
            byte[][] args,
            boolean keysAsArguments,
            int seconds)
            throws InterruptedException {
        Semaphore inFlight = new Semaphore(4);
        AtomicLong keys = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < end) {
            inFlight.acquire();
            byte[][] batch = ThreadLocalRandom.current()
                    .ints(0, 10_000)
                    .distinct()
                    .limit(CEILING_BATCH)
                    .mapToObj(i -> bytes("tollgate:bench:client-" + i))
                    .toArray(byte[][]::new);
            byte[][] declared = batch;
            byte[][] arguments = args;
            if (keysAsArguments) {
                declared = new byte[][] {batch[0]};
                arguments = java.util.Arrays.copyOf(args, args.length + batch.length);
                System.arraycopy(batch, 0, arguments, args.length, batch.length);
            }
            connection
                    .async()
                    .evalsha(digest, ScriptOutputType.MULTI, declared, arguments)
                    .whenComplete((reply, failure) -> {
                        if (failure != null) {
                            System.err.println("script call failed: " + failure);
                        } else {
                            keys.addAndGet(CEILING_BATCH);
                        }
                        inFlight.release();
                    });
        }
        inFlight.acquire(4);
        return keys.get();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static void warmUp(RedisServer redis, Function<RedisServer, BatchingSubjects.Subject> subject)
            throws Exception {
        redis.command("FLUSHALL");
        try (BatchingSubjects.Subject limiter = subject.apply(redis)) {
            RedisLoadHarness.load(limiter::decide, 10_000, 256, 5, redis);
        }
    }
}
