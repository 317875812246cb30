package io.tollgate.redis;

import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.tollgate.redis.internal.TokenBucketScript;
import io.tollgate.spi.SummaryExchange;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * This instance's summaries of who is limited, published to Redis every {@link #INTERVAL} by one call of {@code
 * summaries.lua} (they last {@link #LASTS}), and the other live instances' own, read by another. A timer's
 * call, never one per decision. Thread-safe.
 */
final class SharedSummaries implements SummaryExchange {

    /** How often this instance publishes its summaries: how stale another instance's view of it may be. */
    static final Duration INTERVAL = Duration.ofSeconds(5);

    /** How long published summaries last unless published again: three intervals. */
    static final Duration LASTS = INTERVAL.multipliedBy(3);

    private static final System.Logger LOG = System.getLogger(SharedSummaries.class.getName());
    private static final byte[] PUBLISH = "publish".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] READ = "read".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] WITHDRAW = "withdraw".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOTHING = new byte[0];

    private final RedisConnector connector;
    private final byte[] key;
    private final byte[] id;
    private final Supplier<byte[]> summaries;
    private final TokenBucketScript script = new TokenBucketScript(TokenBucketScript.SUMMARIES_RESOURCE);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "tollgate-shared-summaries");
        thread.setDaemon(true);
        return thread;
    });

    SharedSummaries(RedisConnector connector, byte[] key, Supplier<byte[]> summaries) {
        this.connector = connector;
        this.key = key;
        this.summaries = summaries;
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        this.id = HexFormat.of().formatHex(random).getBytes(StandardCharsets.US_ASCII);
        timer.scheduleWithFixedDelay(this::publish, 0, INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void publish() {
        try {
            call(PUBLISH, summaries.get()).get(INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // Redis cannot be asked, or is slow: the summaries run out there, and are published again next time
            LOG.log(Level.DEBUG, () -> "Tollgate: publishing the summaries of who is limited failed", e);
        }
    }

    @Override
    public CompletableFuture<List<byte[]>> others() {
        return call(READ, NOTHING).thenApply(reply -> {
            List<byte[]> others = new ArrayList<>(reply.size() / 2);
            for (int i = 0; i + 1 < reply.size(); i += 2) {
                if (!Arrays.equals((byte[]) reply.get(i), id)) {
                    others.add((byte[]) reply.get(i + 1));
                }
            }
            return others;
        });
    }

    @Override
    public String storeName() {
        return "Redis";
    }

    @Override
    public void close() {
        timer.shutdownNow();
        if (connector.connected()) {
            try {
                call(WITHDRAW, NOTHING).get(1, TimeUnit.SECONDS);
            } catch (Exception e) {
                // They run out on their own.
            }
        }
    }

    private CompletableFuture<List<Object>> call(byte[] what, byte[] published) {
        RedisScriptingAsyncCommands<byte[], byte[]> redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.failedFuture(new IllegalStateException(connector.notConnected()));
        }
        byte[][] args = {what, id, TokenBucketScript.ascii(LASTS.toNanos() / 1_000), published};
        try {
            return script.run(redis, key, args);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
