package io.tollgate;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The token bucket computed the obvious way, as an oracle for the real arithmetic: each limit holds a
 * rational number of tokens, kept exactly as {@code tokens × period} in BigIntegers, refilled by elapsed
 * time and capped at capacity. It shares nothing with {@link TokenBucket}: no ticks, no lowest terms, no
 * debt. A bucket begins with its first request, with each limit's initial tokens; when some limit does not
 * start full, a bucket whose limits have all been full for the longest refill time of any of them is
 * forgotten and begins again, as every backend forgets idle buckets.
 */
final class ReferenceModel {

    private final List<Limit> limits;
    // units[i] = tokens in limit i, times period_i in µs: one µs adds rate_i.tokens() units exactly.
    private final BigInteger[] units;
    private final long[] fullSince; // when each limit last became full, while it is full
    private final long retentionMicros;
    private long lastMicros;
    private boolean started;

    /** A bucket that begins with its first request, as every backend's does; {@code startMicros} is ignored. */
    ReferenceModel(Policy policy, long startMicros) {
        this.limits = policy.limits();
        this.units = new BigInteger[limits.size()];
        this.fullSince = new long[limits.size()];
        this.lastMicros = startMicros;
        long retention = 0;
        boolean startsFull = true;
        for (int i = 0; i < units.length; i++) {
            startsFull &= limits.get(i).initialTokens() == limits.get(i).capacity();
            retention = Math.max(retention, ceilDiv(capacityUnits(i), BigInteger.valueOf(rate(i).tokens())));
        }
        this.retentionMicros = startsFull ? 0 : retention;
    }

    /** Decides a request that will not wait. */
    Decision tryAcquire(long nowMicros, long cost) {
        refill(nowMicros);
        boolean allowed = true;
        for (int i = 0; i < units.length; i++) {
            allowed &= units[i].compareTo(costUnits(i, cost)) >= 0;
        }
        if (allowed) {
            take(cost);
        }
        int reported = 0;
        for (int i = 1; i < units.length; i++) {
            boolean better =
                    allowed ? remaining(i) < remaining(reported) : retryMicros(i, cost) > retryMicros(reported, cost);
            if (better) {
                reported = i;
            }
        }
        return new Decision(
                allowed,
                limits.get(reported),
                reported,
                remaining(reported),
                allowed ? 0 : retryMicros(reported, cost),
                resetMicros(reported));
    }

    /** Takes the tokens ahead of time if they can be had within maxWait; returns the wait or -1. */
    long reserve(long nowMicros, long cost, long maxWaitMicros) {
        refill(nowMicros);
        long wait = 0;
        for (int i = 0; i < units.length; i++) {
            wait = Math.max(wait, retryMicros(i, cost));
        }
        if (wait > maxWaitMicros) {
            return -1;
        }
        take(cost);
        return wait;
    }

    /**
     * Takes the tokens whatever the bucket holds, into debt if need be but no deeper than {@code maxDebtMicros} of
     * refill below empty (a limit already deeper keeps what it has); returns what it holds after.
     */
    BucketState charge(long nowMicros, long cost, long maxDebtMicros) {
        refill(nowMicros);
        for (int i = 0; i < units.length; i++) {
            BigInteger floor = BigInteger.valueOf(maxDebtMicros)
                    .multiply(BigInteger.valueOf(rate(i).tokens()))
                    .negate();
            BigInteger after = units[i].subtract(costUnits(i, cost));
            units[i] = after.compareTo(floor) >= 0 ? after : units[i].min(floor);
        }
        List<BucketState.LimitState> states = new ArrayList<>(units.length);
        for (int i = 0; i < units.length; i++) {
            states.add(new BucketState.LimitState(limits.get(i), remaining(i), resetMicros(i)));
        }
        return new BucketState(states);
    }

    private void refill(long nowMicros) {
        if (!started) {
            started = true;
            lastMicros = nowMicros;
            begin(nowMicros);
            return;
        }
        long elapsed = Math.max(0, nowMicros - lastMicros);
        long from = lastMicros;
        lastMicros = Math.max(lastMicros, nowMicros);
        boolean forgotten = retentionMicros > 0;
        for (int i = 0; i < units.length; i++) {
            BigInteger missing = capacityUnits(i).subtract(units[i]);
            if (missing.signum() > 0) {
                fullSince[i] = from + ceilDiv(missing, BigInteger.valueOf(rate(i).tokens()));
            }
            BigInteger added = BigInteger.valueOf(elapsed).multiply(BigInteger.valueOf(rate(i).tokens()));
            units[i] = units[i].add(added).min(capacityUnits(i));
            forgotten &= units[i].equals(capacityUnits(i)) && lastMicros - fullSince[i] >= retentionMicros;
        }
        if (forgotten) {
            begin(lastMicros);
        }
    }

    /** A new bucket, at {@code nowMicros}. */
    private void begin(long nowMicros) {
        for (int i = 0; i < units.length; i++) {
            units[i] = initialUnits(i);
            fullSince[i] = nowMicros;
        }
    }

    private BigInteger initialUnits(int i) {
        return BigInteger.valueOf(limits.get(i).initialTokens()).multiply(periodMicros(i));
    }

    private void take(long cost) {
        for (int i = 0; i < units.length; i++) {
            units[i] = units[i].subtract(costUnits(i, cost));
        }
    }

    private long remaining(int i) {
        return units[i].signum() <= 0 ? 0 : units[i].divide(periodMicros(i)).longValueExact();
    }

    private long retryMicros(int i, long cost) {
        BigInteger missing = costUnits(i, cost).subtract(units[i]);
        return missing.signum() <= 0 ? 0 : ceilDiv(missing, BigInteger.valueOf(rate(i).tokens()));
    }

    private long resetMicros(int i) {
        return ceilDiv(capacityUnits(i).subtract(units[i]), BigInteger.valueOf(rate(i).tokens()));
    }

    private BigInteger capacityUnits(int i) {
        return BigInteger.valueOf(limits.get(i).capacity()).multiply(periodMicros(i));
    }

    private BigInteger costUnits(int i, long cost) {
        return BigInteger.valueOf(cost).multiply(periodMicros(i));
    }

    private BigInteger periodMicros(int i) {
        Duration period = rate(i).period();
        return BigInteger.valueOf(period.getSeconds())
                .multiply(BigInteger.valueOf(1_000_000))
                .add(BigInteger.valueOf(period.getNano() / 1_000));
    }

    private Rate rate(int i) {
        return limits.get(i).refill();
    }

    private static long ceilDiv(BigInteger a, BigInteger b) {
        BigInteger[] qr = a.divideAndRemainder(b);
        return (qr[1].signum() == 0 ? qr[0] : qr[0].add(BigInteger.ONE)).longValueExact();
    }
}
