package io.tollgate.benchmarks;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.redis.internal.ScriptArguments;
import io.tollgate.redis.internal.TokenBucketScript;
import io.tollgate.testing.RedisServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Decisions per second and latency of the Redis limiter beside Bucket4j's Lettuce proxy manager, from one
 * JVM with a fixed number of requests in flight, against a redis-server that the harness starts. The limit,
 * capacity 10^9 refilled 1 per second, lets every request pass, so that every decision writes and no key
 * expires during a run. Then the
 * raw ceiling of Tollgate's script from {@code redis-benchmark} (EVALSHA, 16 pipelined), and the memory
 * one bucket takes in Redis.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.RedisLoadHarness
 * [seconds]}. Prints Markdown tables for docs/benchmarks.md and docs/redis.md.
 */
public final class RedisLoadHarness {

    /** The limit of every load: it lets every request pass, so that every decision writes. */
    static final long CAPACITY = 1_000_000_000L;

    static final Rate RATE = Rate.perSecond(1);
    static final Policy POLICY = Policy.of("bench", Limit.of(CAPACITY, RATE));
    static final BucketConfiguration BUCKET4J = BucketConfiguration.builder()
            .addLimit(limit -> limit.capacity(CAPACITY).refillGreedy(RATE.tokens(), RATE.period()))
            .build();

    private RedisLoadHarness() {}

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        String only = args.length > 1 ? args[1] : "all";
        try (RedisServer redis = RedisServer.start()) {
            System.out.println("redis " + redis.info("redis_version") + " on port " + redis.port());
            // Warm both clients up first, so that the JIT has settled before the first measured row.
            tollgate(redis, 10_000, 64, 5, false);
            bucket4j(redis, 10_000, 64, 5, false);
            System.out.println();
            System.out.println(TABLE_HEADER);
            for (int keys : new int[] {1, 10_000}) {
                for (int inFlight : new int[] {64, 256}) {
                    if (!only.equals("bucket4j")) {
                        tollgate(redis, keys, inFlight, seconds, true);
                    }
                    if (!only.equals("tollgate")) {
                        bucket4j(redis, keys, inFlight, seconds, true);
                    }
                }
            }
            if (only.equals("all")) {
                System.out.println();
                ceiling(redis);
                System.out.println();
                memory(redis);
            }
        }
    }

    private static void tollgate(RedisServer redis, int keys, int inFlight, int seconds, boolean print)
            throws Exception {
        redis.command("FLUSHALL");
        redis.command("CONFIG", "RESETSTAT");
        // A budget of a second: this measures decisions made by Redis, not the fallback. One script call per
        // decision, as measured for issue #3; BatchingLoadHarness measures the default, batching.
        try (RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.uri())
                .timeout(Duration.ofSeconds(1))
                .batching(false)
                .build()) {
            Result result = load(key -> limiter.tryAcquireAsync(key, POLICY, 1), keys, inFlight, seconds, redis);
            if (print) {
                System.out.println(result.row("Tollgate, unbatched", keys, inFlight));
            }
        }
    }

    private static void bucket4j(RedisServer redis, int keys, int inFlight, int seconds, boolean print)
            throws Exception {
        redis.command("FLUSHALL");
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
            AsyncProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(connection)
                    .expirationAfterWrite(
                            ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                    .build()
                    .asAsync();
            Result result = load(
                    key -> buckets.builder()
                            .build(key.getBytes(StandardCharsets.UTF_8), BUCKET4J)
                            .tryConsumeAndReturnRemaining(1),
                    keys,
                    inFlight,
                    seconds,
                    redis);
            if (print) {
                System.out.println(result.row("Bucket4j Lettuce (CAS)", keys, inFlight));
            }
        } finally {
            client.shutdown();
        }
    }

    /**
     * Keeps {@code inFlight} requests outstanding for a 3 s warm-up and then {@code seconds}, and measures
     * over those seconds the processor time Redis and this JVM spent and Redis's time inside scripts. A
     * Tollgate decision that a failure policy made (Redis did not decide) counts as failed, as a stage that
     * fails does: checked here rather than by a stage of the limiter's own, which would cost Tollgate a
     * completion per decision that the peers do not pay.
     */
    static Result load(
            Function<String, CompletionStage<?>> decide, int keys, int inFlight, int seconds, RedisServer redis)
            throws InterruptedException {
        return load(decide, keys, inFlight, seconds, List.of(redis));
    }

    /** {@link #load(Function, int, int, int, RedisServer)} with the processor time of several servers summed. */
    static Result load(
            Function<String, CompletionStage<?>> decide, int keys, int inFlight, int seconds, List<RedisServer> redis)
            throws InterruptedException {
        String[] names = new String[keys];
        for (int i = 0; i < keys; i++) {
            names[i] = "client-" + i;
        }
        Semaphore permits = new Semaphore(inFlight);
        Recorder latencies = new Recorder(TimeUnit.SECONDS.toMicros(10), 3);
        AtomicLong failures = new AtomicLong();
        long warmUpEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        long end = warmUpEnd + TimeUnit.SECONDS.toNanos(seconds);
        long completedBefore = 0;
        AtomicLong completed = new AtomicLong();
        boolean measuring = false;
        Usage before = null;
        while (System.nanoTime() < end) {
            if (!measuring && System.nanoTime() >= warmUpEnd) {
                measuring = true;
                latencies.getIntervalHistogram(); // drop the warm-up
                completedBefore = completed.get();
                before = Usage.of(redis);
            }
            permits.acquire();
            long start = System.nanoTime();
            String key = names[keys == 1 ? 0 : ThreadLocalRandom.current().nextInt(keys)];
            decide.apply(key).whenComplete((decision, failure) -> {
                latencies.recordValue(Math.max(1, (System.nanoTime() - start) / 1_000));
                if (failure != null || decision instanceof Decision made && made.degraded()) {
                    failures.incrementAndGet();
                }
                completed.incrementAndGet();
                permits.release();
            });
        }
        long decisions = completed.get() - completedBefore;
        Usage spent = Usage.of(redis).minus(before);
        double perSecond = decisions / (double) seconds;
        // A limiter that livelocks (compare-and-swap on one hot key) is reported, not waited for forever.
        long unanswered =
                permits.tryAcquire(inFlight, 30, TimeUnit.SECONDS) ? 0 : inFlight - permits.availablePermits();
        Histogram histogram = latencies.getIntervalHistogram();
        return new Result(perSecond, histogram, failures.get() + unanswered, spent.per(decisions));
    }

    /**
     * Processor time of Redis and of this JVM, and Redis's time inside scripts, in microseconds; and the script
     * calls Redis took.
     */
    record Usage(double redisCpu, double jvmCpu, double scripts, double calls) {

        static Usage of(RedisServer redis) {
            return of(List.of(redis));
        }

        /** The processor and script time of every server, summed. */
        static Usage of(List<RedisServer> servers) {
            double redisCpu = 0;
            double scripts = 0;
            double calls = 0;
            for (RedisServer redis : servers) {
                // the commands clients sent that run a script: a limiter's calls, whatever the script then does
                calls += commandStat(redis, "evalsha", "calls") + commandStat(redis, "eval", "calls");
                redisCpu += 1e6
                        * (Double.parseDouble(redis.info("used_cpu_user"))
                                + Double.parseDouble(redis.info("used_cpu_sys")));
                scripts += commandStat(redis, "evalsha", "usec") + commandStat(redis, "eval", "usec");
            }
            double jvmCpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                            .getProcessCpuTime()
                    / 1e3;
            return new Usage(redisCpu, jvmCpu, scripts, calls);
        }

        Usage minus(Usage before) {
            return new Usage(
                    redisCpu - before.redisCpu, jvmCpu - before.jvmCpu, scripts - before.scripts, calls - before.calls);
        }

        Usage per(long decisions) {
            double n = Math.max(1, decisions);
            return new Usage(redisCpu / n, jvmCpu / n, scripts / n, calls / n);
        }
    }

    /**
     * @param perDecision processor and script time per decision, in microseconds
     */
    record Result(double perSecond, Histogram micros, long failures, Usage perDecision) {
        String row(String limiter, int keys, int inFlight) {
            return String.format(
                    Locale.ROOT,
                    "| %s | %,d | %d | %,.0f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f |%s",
                    limiter,
                    keys,
                    inFlight,
                    perSecond,
                    micros.getValueAtPercentile(50) / 1000.0,
                    micros.getValueAtPercentile(99) / 1000.0,
                    micros.getValueAtPercentile(99.9) / 1000.0,
                    perDecision.redisCpu(),
                    perDecision.scripts(),
                    perDecision.jvmCpu(),
                    perDecision.calls() * 1_000,
                    failures > 0 ? " (" + failures + " failed or unanswered)" : "");
        }
    }

    /** The header of {@link Result#row}'s table. */
    static final String TABLE_HEADER = "| limiter | keys | in flight | decisions/s | p50 ms | p99 ms | p99.9 ms"
            + " | Redis CPU µs per decision | of which in scripts | JVM CPU µs per decision"
            + " | script calls per 1 000 decisions |\n"
            + "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |";

    /**
     * The script alone, driven by redis-benchmark with 16 commands pipelined per connection, and plain writes beside
     * it: what Redis itself does, the ceiling of any limiter that calls it once a decision. Prints a table; returns
     * each row's requests a second (NaN where redis-benchmark failed), by row name.
     */
    static Map<String, Double> ceiling(RedisServer redis) throws IOException, InterruptedException {
        String digest = new TokenBucketScript().digest();
        try (RedisRateLimiter limiter =
                RedisRateLimiter.builder().uri(redis.uri()).batching(false).build()) {
            limiter.tryAcquire("warm", POLICY); // loads token_bucket.lua into Redis's cache
        }
        System.out.println("| redis-benchmark, 50 connections, -P 16 | requests/s |");
        System.out.println("| --- | --- |");
        List<String> arguments = new ArrayList<>();
        for (byte[] argument : new ScriptArguments(null).of(POLICY, 1, 0)) { // exactly as the limiter calls it
            arguments.add(new String(argument, StandardCharsets.US_ASCII));
        }
        Map<String, Double> ceilings = new LinkedHashMap<>();
        for (String key : new String[] {"tollgate:bench:hot", "tollgate:bench:__rand_int__"}) {
            redis.command("FLUSHALL");
            List<String> commandLine = new ArrayList<>(List.of("EVALSHA", digest, "1", key));
            commandLine.addAll(arguments);
            String name = "EVALSHA token_bucket.lua, " + (key.contains("rand") ? "10 000 keys" : "one hot key");
            String requestsPerSecond = redisBenchmark(redis, 2_000_000, commandLine.toArray(String[]::new));
            ceilings.put(name, number(requestsPerSecond));
            System.out.println("| " + name + " | " + requestsPerSecond + " |");
        }
        // The last: one write with an expiry per request, the least a bucket that expires costs Redis.
        for (String[] plain : new String[][] {
            {"SET", "k", "v"}, {"SET", "k:__rand_int__", "v"}, {"SET", "k:__rand_int__", "v", "PX", "3600000"}
        }) {
            String name = String.join(" ", plain);
            String requestsPerSecond = redisBenchmark(redis, 4_000_000, plain);
            ceilings.put(name, number(requestsPerSecond));
            System.out.println("| " + name + " | " + requestsPerSecond + " |");
        }
        return ceilings;
    }

    private static double number(String requestsPerSecond) {
        try {
            return Double.parseDouble(requestsPerSecond.replace(",", ""));
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /** Runs redis-benchmark with 50 connections, 16 pipelined, keys from 10 000; returns requests/s. */
    private static String redisBenchmark(RedisServer redis, int requests, String... commandLine)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                "redis-benchmark",
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(redis.port()),
                "-n",
                Integer.toString(requests),
                "-c",
                "50",
                "-P",
                "16",
                "-r",
                "10000",
                "-q"));
        command.addAll(List.of(commandLine));
        Path output = Files.createTempFile("redis-benchmark", ".txt");
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        process.waitFor(5, TimeUnit.MINUTES);
        String text = Files.readString(output);
        Files.delete(output);
        for (String line : text.split("[\r\n]+")) {
            int at = line.indexOf(" requests per second");
            if (at > 0) {
                String[] words = line.substring(0, at).trim().split("\\s+");
                return words[words.length - 1];
            }
        }
        return "failed: " + text.strip();
    }

    /** Bytes of Redis memory per bucket, over a million keys. */
    private static void memory(RedisServer redis) throws Exception {
        int keys = 1_000_000;
        Policy oneLimit = Policy.of("one", Limit.of(10, Rate.perHour(10)));
        Policy twoLimits = Policy.of("two", Limit.of(10, Rate.perSecond(10)), Limit.of(1_000, Rate.perDay(1_000)));
        System.out.println("| buckets of 1 000 000 keys | used_memory per key |");
        System.out.println("| --- | --- |");
        try (RedisRateLimiter limiter =
                RedisRateLimiter.builder().uri(redis.uri()).build()) {
            for (Policy policy : List.of(oneLimit, twoLimits)) {
                redis.command("FLUSHALL");
                long before = Long.parseLong(redis.info("used_memory"));
                Semaphore permits = new Semaphore(512);
                for (int i = 0; i < keys; i++) {
                    permits.acquire();
                    limiter.tryAcquireAsync("client-" + i, policy, 1).whenComplete((d, e) -> permits.release());
                }
                permits.acquire(512);
                long after = Long.parseLong(redis.info("used_memory"));
                System.out.println("| Tollgate, " + policy.limits().size() + " limit(s), key `tollgate:" + policy.name()
                        + ":client-N` | " + (after - before) / keys + " bytes |");
            }
        }
    }

    /** Returns one statistic of a command from INFO commandstats, such as its calls or usec; 0 if never called. */
    static double commandStat(RedisServer redis, String command, String statistic) {
        String stats = (String) redis.command("INFO", "commandstats");
        for (String line : stats.split("\r\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                for (String part : line.substring(line.indexOf(':') + 1).split(",")) {
                    if (part.startsWith(statistic + "=")) {
                        return Double.parseDouble(part.substring(statistic.length() + 1));
                    }
                }
            }
        }
        return 0;
    }
}
