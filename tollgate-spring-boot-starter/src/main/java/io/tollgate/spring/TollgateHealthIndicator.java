package io.tollgate.spring;

import io.tollgate.RateLimiter;
import io.tollgate.runtime.Stores;
import io.tollgate.spi.OpenedStore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of Tollgate's limiter, as Actuator's component {@code tollgate}: up in memory (and for an
 * application's own limiter, named by its {@code toString}); on Redis, up while
 * Redis answers a {@code PING} (to every master of a cluster) within the limiter's budget, down with why
 * otherwise, and in both cases the state of the circuit breakers. A Redis that is down does not stop
 * requests (the failure policy decides them): whether it turns the application's health down is the
 * application's choice, through Actuator's health groups. Thread-safe.
 */
public class TollgateHealthIndicator implements HealthIndicator {

    /** The longest a health check waits for the store, beyond which it reports it down. */
    static final Duration WAIT = Duration.ofSeconds(2);

    private final RateLimiter limiter;
    /** The limiter's store, where a store Tollgate knows holds it: found once, asked on every check. */
    private final Optional<OpenedStore> known;

    /** Reports on {@code limiter}. */
    public TollgateHealthIndicator(RateLimiter limiter) {
        this.limiter = limiter;
        this.known = Stores.adopt(limiter);
    }

    @Override
    public Health health() {
        if (known.isEmpty() || known.get().inProcess()) {
            // An application's own limiter is not called "memory": it may keep its buckets anywhere.
            return Health.up()
                    .withDetail("store", known.isPresent() ? known.get().name() : limiter.toString())
                    .build();
        }
        OpenedStore store = known.get();
        Optional<String> problem;
        try {
            problem = store.ping().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problem = Optional.of("interrupted while asking the store");
        } catch (Exception e) {
            problem = Optional.of("the store did not answer within " + WAIT.toMillis() + " ms");
        }
        Health.Builder health = problem.isEmpty() ? Health.up() : Health.down().withDetail("reason", problem.get());
        health.withDetail("store", store.name());
        store.details().forEach(health::withDetail);
        return health.build();
    }
}
