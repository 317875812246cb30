package io.tollgate.redis;

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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * A token bucket Lua script ({@code token_bucket.lua} for one decision, {@code token_bucket_batch.lua} for
 * many), run by its SHA-1 digest with EVALSHA. When the server does not know the script (it restarted, its
 * script cache was flushed, or a replica was promoted) the call is repeated once as EVAL with the script's
 * text, which also caches it there again.
 */
final class TokenBucketScript {

    static final String RESOURCE = "token_bucket.lua";
    static final String BATCH_RESOURCE = "token_bucket_batch.lua";

    private static final byte[] REDIS_TIME = new byte[0];

    private final byte[] source;
    private final String digest;

    /** The script for one decision. */
    TokenBucketScript() {
        this(RESOURCE);
    }

    /** The script in {@code resource}, beside this class. */
    TokenBucketScript(String resource) {
        try (InputStream in = TokenBucketScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the tollgate-redis jar");
            }
            source = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
        try {
            digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-1", e);
        }
    }

    String digest() {
        return digest;
    }

    String text() {
        return new String(source, StandardCharsets.UTF_8);
    }

    /** Loads the script into Redis's script cache ({@code SCRIPT LOAD}), so that no call has to send it. */
    CompletableFuture<String> load(RedisScriptingAsyncCommands<byte[], byte[]> redis) {
        return redis.scriptLoad(source).toCompletableFuture();
    }

    /** Runs the script on {@code key}; the stage completes with the script's reply, a list of longs. */
    CompletableFuture<List<Object>> run(RedisScriptingAsyncCommands<byte[], byte[]> redis, byte[] key, byte[][] args) {
        return run(redis, new byte[][] {key}, args);
    }

    /** Runs the script on {@code keys}; the stage completes with the script's reply, a list. */
    CompletableFuture<List<Object>> run(
            RedisScriptingAsyncCommands<byte[], byte[]> redis, byte[][] keys, byte[][] args) {
        return redis.<List<Object>>evalsha(digest, ScriptOutputType.MULTI, keys, args)
                .toCompletableFuture()
                .exceptionallyCompose(failure -> unwrap(failure) instanceof RedisNoScriptException
                        ? redis.<List<Object>>eval(source, ScriptOutputType.MULTI, keys, args)
                                .toCompletableFuture()
                        : CompletableFuture.failedFuture(failure));
    }

    /** Returns what failed inside a future's wrapping exception. */
    static Throwable unwrap(Throwable failure) {
        return (failure instanceof CompletionException || failure instanceof ExecutionException)
                        && failure.getCause() != null
                ? failure.getCause()
                : failure;
    }

    /** Both scripts' first argument: the caller's time in microseconds, or empty for Redis's own TIME. */
    static byte[] nowArgument(TimeSource clientClock) {
        return clientClock == null ? REDIS_TIME : ascii(clientClock.nowMicros());
    }

    /** A number as the scripts read their arguments. */
    static byte[] ascii(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }
}
