package io.tollgate.benchmarks;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The exactness test a user runs when choosing a limiter: three fresh JVMs, 32 threads each, call one key's
 * limiter for two seconds from the same moment, on one Redis, for Tollgate at its default settings, Bucket4j's
 * Lettuce proxy manager and Redisson's {@code RRateLimiter} (and Tollgate with leases on the key's policy). The limit is 100 a minute (Tollgate and Bucket4j: a
 * bucket of 100 refilled 100 a minute, at most 103 in the window; Redisson: 100 permits per minute). Prints one
 * row per limiter with each round's admitted count.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.ThreeProcessExactness
 * [rounds]} (default 10). It starts its own redis-server; each round forks three JVMs of this class path.
 */
public final class ThreeProcessExactness {

    private static final int PROCESSES = 3;
    private static final int THREADS = 32;
    private static final long SECONDS = 2;

    private static final java.util.Map<String, Long> ADMITTED_DEGRADED = new java.util.concurrent.ConcurrentHashMap<>();

    private ThreeProcessExactness() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("client")) {
            client(args[1], args[2], args[3], Long.parseLong(args[4]));
            return;
        }
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        System.out.println("| limiter | admitted of at most, each round | rounds over |");
        System.out.println("| --- | --- | --- |");
        try (RedisServer redis = RedisServer.start()) {
            for (String subject :
                    List.of(System.getProperty("subjects", "Tollgate,Tollgate with leases,Bucket4j,Redisson")
                            .split(","))) {
                List<String> admitted = new ArrayList<>();
                int over = 0;
                for (int round = 0; round < rounds; round++) {
                    redis.command("FLUSHALL");
                    long[] counted = round(redis, subject, "round-" + round);
                    // A bucket of 100 that starts full and gains a token every 600 ms, over the span from the first
                    // JVM's start to the last one's end; Redisson's 100 permits in any minute.
                    long most = subject.equals("Redisson") ? 100 : 100 + counted[1] / 600;
                    admitted.add(counted[0] + " of " + most);
                    over += counted[0] > most ? 1 : 0;
                }
                System.out.printf("| %s | %s | %d of %d |%n", subject, String.join(", ", admitted), over, rounds);
            }
        }
    }

    /**
     * Forks the three client JVMs, starting together a few seconds on; returns what they admitted, summed, and
     * the milliseconds from the first one's start to the last one's end.
     */
    private static long[] round(RedisServer redis, String subject, String key) throws Exception {
        long startAt = System.currentTimeMillis() + 4_000; // time for each JVM to start and build its limiter
        List<Process> processes = new ArrayList<>();
        for (int p = 0; p < PROCESSES; p++) {
            processes.add(new ProcessBuilder(
                            ProcessHandle.current().info().command().orElse("java"),
                            "-cp",
                            System.getProperty("java.class.path"),
                            ThreeProcessExactness.class.getName(),
                            "client",
                            subject,
                            redis.uri(),
                            key,
                            Long.toString(startAt))
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start());
        }
        long total = 0;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (Process process : processes) {
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String answer = null;
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    if (line.startsWith("degraded admissions") && !line.endsWith("{}")) {
                        System.err.println(subject + " " + key + ": " + line);
                    }
                    answer = line;
                }
                if (process.waitFor() != 0 || answer == null || !answer.startsWith("admitted ")) {
                    throw new IllegalStateException(subject + " client failed: " + answer);
                }
                String[] words = answer.split(" "); // admitted N from START to END
                total += Long.parseLong(words[1]);
                first = Math.min(first, Long.parseLong(words[3]));
                last = Math.max(last, Long.parseLong(words[5]));
            }
        }
        return new long[] {total, last - first};
    }

    /** One JVM: builds the limiter, waits for the common start, runs the threads, prints what it admitted. */
    private static void client(String subject, String uri, String key, long startAt) throws Exception {
        BooleanSupplier tryAcquire;
        AutoCloseable close;
        switch (subject) {
            case "Tollgate", "Tollgate with leases" -> {
                RedisRateLimiter.Builder builder = RedisRateLimiter.builder().uri(uri); // the defaults
                RedisRateLimiter limiter = (subject.equals("Tollgate") ? builder : builder.leases("exact")).build();
                Policy policy = Policy.of("exact", Limit.of(100, Rate.perMinute(100)));
                tryAcquire = () -> {
                    Decision decision = limiter.tryAcquire(key, policy);
                    if (decision.degraded() && decision.allowed()) {
                        ADMITTED_DEGRADED.merge(
                                decision.degradation().cause() + " "
                                        + decision.degradation().fallback(),
                                1L,
                                Long::sum);
                    }
                    return decision.allowed();
                };
                close = limiter;
            }
            case "Bucket4j" -> {
                RedisClient client = RedisClient.create(uri);
                StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
                ProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(connection)
                        .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                                Duration.ofSeconds(10)))
                        .build();
                BucketConfiguration configuration = BucketConfiguration.builder()
                        .addLimit(limit -> limit.capacity(100).refillGreedy(100, Duration.ofMinutes(1)))
                        .build();
                var bucket = buckets.builder().build(key.getBytes(StandardCharsets.UTF_8), () -> configuration);
                tryAcquire = () -> bucket.tryConsume(1);
                close = () -> {
                    connection.close();
                    client.shutdown();
                };
            }
            case "Redisson" -> {
                Config config = new Config();
                config.useSingleServer().setAddress(uri);
                RedissonClient client = Redisson.create(config);
                RRateLimiter limiter = client.getRateLimiter(key);
                limiter.trySetRate(RateType.OVERALL, 100, Duration.ofMinutes(1));
                tryAcquire = limiter::tryAcquire;
                close = client::shutdown;
            }
            default -> throw new IllegalArgumentException("no such limiter: " + subject);
        }
        AtomicLong admitted = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                while (!stop.get()) {
                    if (tryAcquire.getAsBoolean()) {
                        admitted.incrementAndGet();
                    }
                }
            });
            thread.start();
            threads.add(thread);
        }
        Thread.sleep(Math.max(0, startAt - System.currentTimeMillis()));
        long from = System.currentTimeMillis();
        go.countDown();
        Thread.sleep(SECONDS * 1_000);
        stop.set(true);
        for (Thread thread : threads) {
            thread.join();
        }
        System.out.println("degraded admissions " + ADMITTED_DEGRADED);
        System.out.println("admitted " + admitted.get() + " from " + from + " to " + System.currentTimeMillis());
        close.close();
        System.exit(0);
    }
}
