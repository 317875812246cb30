package io.tollgate.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.tollgate.Degradation;
import io.tollgate.guard.StoreFailure;
import io.tollgate.redis.internal.NotABucketException;
import io.tollgate.redis.internal.TokenBucketScript;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/** Sorts the ways a call to Redis fails into what the guard does about them. Stateless. */
final class RedisFailures {

    private RedisFailures() {}

    static StoreFailure classify(Throwable failure, Duration timeout, byte[] bucketKey) {
        return classify(failure, timeout, " (deciding for key '" + BucketKeys.describe(bucketKey) + "')");
    }

    /** Classifies a failure of a call that {@code context} describes, such as the key it was for. */
    static StoreFailure classify(Throwable failure, Duration timeout, String context) {
        Throwable error = TokenBucketScript.unwrap(failure);
        String key = context;
        if (error instanceof TimeoutException || error instanceof RedisCommandTimeoutException) {
            return new StoreFailure(
                    Degradation.Cause.TIMEOUT, "Redis did not answer within " + timeout.toMillis() + " ms" + key, true);
        }
        if (error instanceof NotABucketException) { // the scripts' reply code: only this key is wrong
            return new StoreFailure(
                    Degradation.Cause.ERROR_REPLY, "Redis answered: " + error.getMessage() + key, false);
        }
        if (error instanceof RedisCommandExecutionException) {
            return new StoreFailure(Degradation.Cause.ERROR_REPLY, "Redis answered: " + error.getMessage() + key, true);
        }
        if (error instanceof RedisConnectionException
                || error instanceof IOException
                || String.valueOf(error.getMessage()).contains("not connected")
                || String.valueOf(error.getMessage()).contains("Connection closed")
                // Lettuce's answer to a command in flight when the connection dropped
                || String.valueOf(error.getMessage()).contains("Connection disconnected")) {
            return new StoreFailure(
                    Degradation.Cause.UNREACHABLE, "Redis is unreachable: " + error.getMessage() + key, true);
        }
        return new StoreFailure(Degradation.Cause.UNREACHABLE, "Redis call failed: " + error + key, true);
    }
}
