package io.tollgate.benchmarks;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
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
 * Lettuce proxy manager and Redisson's {@code RRateLimiter}. The limit is 100 a minute (Tollgate and Bucket4j: a
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

    private ThreeProcessExactness() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("client")) {
            client(args[1], args[2], args[3], Long.parseLong(args[4]));
            return;
        }
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        System.out.println("| limiter | most allowed in 2 s | admitted in each round | rounds over |");
        System.out.println("| --- | --- | --- | --- |");
        try (RedisServer redis = RedisServer.start()) {
            for (String subject : List.of("Tollgate", "Bucket4j", "Redisson")) {
                List<Long> admitted = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    redis.command("FLUSHALL");
                    admitted.add(round(redis, subject, "round-" + round));
                }
                long most = subject.equals("Redisson") ? 100 : 103;
                System.out.printf(
                        "| %s | %d | %s | %d of %d |%n",
                        subject,
                        most,
                        admitted.toString().replace("[", "").replace("]", ""),
                        admitted.stream().filter(count -> count > most).count(),
                        rounds);
            }
        }
    }

    /** Forks the three client JVMs, starting together a few seconds on, and sums what they admitted. */
    private static long round(RedisServer redis, String subject, String key) throws Exception {
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
        for (Process process : processes) {
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String last = null;
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    last = line;
                }
                if (process.waitFor() != 0 || last == null || !last.startsWith("admitted ")) {
                    throw new IllegalStateException(subject + " client failed: " + last);
                }
                total += Long.parseLong(last.substring("admitted ".length()));
            }
        }
        return total;
    }

    /** One JVM: builds the limiter, waits for the common start, runs the threads, prints what it admitted. */
    private static void client(String subject, String uri, String key, long startAt) throws Exception {
        BooleanSupplier tryAcquire;
        AutoCloseable close;
        switch (subject) {
            case "Tollgate" -> {
                RedisRateLimiter limiter = RedisRateLimiter.builder().uri(uri).build(); // the defaults
                Policy policy = Policy.of("exact", Limit.of(100, Rate.perMinute(100)));
                tryAcquire = () -> limiter.tryAcquire(key, policy).allowed();
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
        go.countDown();
        Thread.sleep(SECONDS * 1_000);
        stop.set(true);
        for (Thread thread : threads) {
            thread.join();
        }
        System.out.println("admitted " + admitted.get());
        close.close();
        System.exit(0);
    }
}
