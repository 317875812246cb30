package io.tollgate.redis.internal;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.tollgate.TimeSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One of Tollgate's Lua scripts, assembled and ready to run: the script's resource with each of its {@code --
 * #include NAME.lua} lines replaced by that resource ({@code clock.lua}, the time, in every script that reads
 * it; {@code token_bucket_common.lua}, what both token bucket scripts share), and the SHA-1 digest under which
 * Redis caches that whole text. Calls go by digest ({@code EVALSHA}) and fall back to the
 * text when Redis does not have it ({@code EVAL}): it restarted, its script cache was flushed, or a replica
 * was promoted; that also caches it there again.
 *
 * <p>Immutable and thread-safe.
 */
public final class TokenBucketScript {

    /** The script of one decision, charge, refund or reading. */
    public static final String RESOURCE = "token_bucket.lua";

    /** The script of a batch of decisions. */
    public static final String BATCH_RESOURCE = "token_bucket_batch.lua";

    /** The script of concurrency limits' permits: acquire, release, renew, count. Includes the clock only. */
    public static final String IN_FLIGHT_RESOURCE = "in_flight.lua";

    /** The script of live instances' announcements. Includes the clock only. */
    public static final String INSTANCES_RESOURCE = "instances.lua";

    /** The script of the summaries of who is limited that instances share. Includes the clock only. */
    public static final String SUMMARIES_RESOURCE = "summaries.lua";

    /** The script that announces a change made outside a request and names the live instances to confirm it. */
    public static final String CHANGES_RESOURCE = "changes.lua";

    /** The scripts that include the clock and not the token bucket. */
    private static final Set<String> CLOCK_ONLY =
            Set.of(IN_FLIGHT_RESOURCE, INSTANCES_RESOURCE, SUMMARIES_RESOURCE, CHANGES_RESOURCE);

    private static final String COMMON = "token_bucket_common.lua";
    private static final String INCLUDE = "-- #include " + COMMON + "\n";
    private static final Pattern INCLUDE_LINE = Pattern.compile("(?m)^-- #include ([a-z_]+\\.lua)\n");
    private static final String RESOURCES = "/io/tollgate/redis/";

    private static final byte[] REDIS_TIME = new byte[0];

    private final byte[] source;
    private final String digest;

    /** The script for one decision. */
    public TokenBucketScript() {
        this(RESOURCE);
    }

    /**
     * The script {@code resource} ({@link #RESOURCE}, {@link #BATCH_RESOURCE}, {@link #IN_FLIGHT_RESOURCE}, {@link
     * #INSTANCES_RESOURCE}, {@link #SUMMARIES_RESOURCE} or {@link #CHANGES_RESOURCE}), assembled.
     *
     * @throws IllegalStateException if a resource is missing, or a token bucket script has no line that includes
     *     {@code token_bucket_common.lua}
     */
    public TokenBucketScript(String resource) {
        String text = read(resource);
        if (!text.contains(INCLUDE) && !CLOCK_ONLY.contains(resource)) {
            throw new IllegalStateException(resource + " has no line '" + INCLUDE.strip() + "'");
        }
        // One level: the included parts include nothing themselves
        source = INCLUDE_LINE
                .matcher(text)
                .replaceAll(line -> Matcher.quoteReplacement(read(line.group(1))))
                .getBytes(StandardCharsets.UTF_8);
        try {
            digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-1", e);
        }
    }

    private static String read(String resource) {
        try (InputStream in = TokenBucketScript.class.getResourceAsStream(RESOURCES + resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the tollgate-redis jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    /** Returns the SHA-1 digest of the assembled text, as Redis names the script. */
    public String digest() {
        return digest;
    }

    /** Returns the assembled text, as Redis runs it. */
    public String text() {
        return new String(source, StandardCharsets.UTF_8);
    }

    /** Loads the script into Redis's script cache ({@code SCRIPT LOAD}), so that no call has to send it. */
    public CompletableFuture<String> load(RedisScriptingAsyncCommands<byte[], byte[]> redis) {
        return redis.scriptLoad(source).toCompletableFuture();
    }

    /** Runs the script on {@code key}; the stage completes with the script's reply, a list of longs. */
    public CompletableFuture<List<Object>> run(
            RedisScriptingAsyncCommands<byte[], byte[]> redis, byte[] key, byte[][] args) {
        return run(redis, new byte[][] {key}, args);
    }

    /** Runs the script on {@code keys}; the stage completes with the script's reply, a list. */
    public CompletableFuture<List<Object>> run(
            RedisScriptingAsyncCommands<byte[], byte[]> redis, byte[][] keys, byte[][] args) {
        return redis.<List<Object>>evalsha(digest, ScriptOutputType.MULTI, keys, args)
                .toCompletableFuture()
                .exceptionallyCompose(failure -> unwrap(failure) instanceof RedisNoScriptException
                        ? redis.<List<Object>>eval(source, ScriptOutputType.MULTI, keys, args)
                                .toCompletableFuture()
                        : CompletableFuture.failedFuture(failure));
    }

    /** Returns what failed inside a future's wrapping exception. */
    public static Throwable unwrap(Throwable failure) {
        return (failure instanceof CompletionException || failure instanceof ExecutionException)
                        && failure.getCause() != null
                ? failure.getCause()
                : failure;
    }

    /** Both scripts' first argument: the caller's time in microseconds, or empty for Redis's own TIME. */
    public static byte[] nowArgument(TimeSource clientClock) {
        return clientClock == null ? REDIS_TIME : ascii(clientClock.nowMicros());
    }

    /** A number as the scripts read their arguments. */
    public static byte[] ascii(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }
}
