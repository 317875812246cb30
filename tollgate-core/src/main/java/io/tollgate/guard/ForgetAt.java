package io.tollgate.guard;

import com.github.benmanes.caffeine.cache.Expiry;
import java.util.function.ToLongFunction;

/**
 * A Caffeine expiry for caches whose ticker counts a {@link io.tollgate.TimeSource}'s microseconds in
 * nanoseconds: each entry is forgotten at the microsecond its value names, set when it is written and kept
 * when it is read.
 *
 * @param <K> the key
 * @param <V> the value, which says when it is to be forgotten
 */
final class ForgetAt<K, V> implements Expiry<K, V> {

    private final ToLongFunction<V> forgetAtMicros;

    /** @param forgetAtMicros when a value just written is to be forgotten, in the time source's microseconds */
    ForgetAt(ToLongFunction<V> forgetAtMicros) {
        this.forgetAtMicros = forgetAtMicros;
    }

    @Override
    public long expireAfterCreate(K key, V value, long currentTime) {
        return Math.max(0, (forgetAtMicros.applyAsLong(value) - currentTime / 1_000) * 1_000);
    }

    @Override
    public long expireAfterUpdate(K key, V value, long currentTime, long currentDuration) {
        return expireAfterCreate(key, value, currentTime);
    }

    @Override
    public long expireAfterRead(K key, V value, long currentTime, long currentDuration) {
        return currentDuration;
    }
}
