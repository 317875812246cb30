package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.ManualTimeSource;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs the Java examples of README.md and docs/concepts.md. Each example is written out below exactly as
 * the documentation shows it, followed by assertions; {@link #everyJavaExampleOfTheseDocsIsRunHere()}
 * fails if one of those pages shows code that is not in this file.
 */
class DocumentationExamplesTest {

    @Test
    void readmeQuickStart() {
        PrintStream console = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            readmeQuickStartAsWritten();
        } finally {
            System.setOut(console);
        }

        // the ten tokens go within microseconds, so the eleventh waits for nearly all of the 200 ms refill
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .matches("request 11: 429, retry after (1\\d\\d|200) ms\\R");
    }

    private static void readmeQuickStartAsWritten() {
        // --- README: quick start
        Policy perClient = Policy.of("per-client", Limit.of(10, Rate.perSecond(5)));
        RateLimiter limiter = InMemoryRateLimiter.create();

        for (int request = 1; request <= 11; request++) {
            Decision decision = limiter.tryAcquire("alice", perClient);
            if (!decision.allowed()) {
                // refused: tell the client when to come back
                System.out.println("request " + request + ": 429, retry after "
                        + decision.retryAfter().toMillis() + " ms");
            }
        }
        // prints: request 11: 429, retry after 200 ms (less the time the ten before it took)
        // ---
    }

    @Test
    void conceptsLimitsAndRates() {
        // --- concepts: limits
        Limit burst = Limit.of(10, Rate.perSecond(5)); // up to 10 at once, then 5 per second
        Limit daily = Limit.of(1_000, Rate.perDay(1_000)); // 1000 a day, regained evenly
        Limit slow = Limit.of(1, Rate.of(1, Duration.ofSeconds(10))); // one every 10 seconds
        Limit parsed = Limit.of(10, Rate.parse("1 per 10s")); // the form config files use
        // ---

        assertThat(burst.refillTime()).isEqualTo(Duration.ofSeconds(2));
        assertThat(daily.refillTime()).isEqualTo(Duration.ofDays(1));
        assertThat(slow.refill()).isEqualTo(parsed.refill());
    }

    @Test
    void conceptsPolicies() {
        // --- concepts: policies
        Policy api = Policy.of(
                "api",
                Limit.of(10, Rate.perSecond(10)), // burst
                Limit.of(1_000, Rate.perHour(1_000))); // hourly quota

        RateLimiter limiter = InMemoryRateLimiter.create();
        Decision decision = limiter.tryAcquire("key-123", api);
        // decision.limitIndex() tells which limit the decision reports: 0 here, the burst
        // ---

        assertThat(decision.allowed()).isTrue();
        assertThat(decision.limitIndex()).isZero();
        assertThat(decision.limit()).isEqualTo(api.limits().get(0));
    }

    @Test
    void conceptsDecisions() {
        Policy perClient = Policy.of("per-client", Limit.of(10, Rate.perSecond(5)));
        RateLimiter limiter = InMemoryRateLimiter.create();
        limiter.tryAcquire("alice", perClient, 10);

        // --- concepts: decisions
        Decision decision = limiter.tryAcquire("alice", perClient);
        if (decision.allowed()) {
            System.out.println(decision.remaining() + " tokens left");
        } else {
            System.out.println("refused; a request of this cost passes in " + decision.retryAfter());
        }
        System.out.println("full again in " + decision.resetAfter());
        // ---

        assertThat(decision.allowed()).isFalse();
        assertThat(decision.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(200));
    }

    @Test
    void conceptsInitialTokens() {
        ManualTimeSource time = new ManualTimeSource();
        RateLimiter memory = InMemoryRateLimiter.builder().timeSource(time).build();

        // --- concepts: initial tokens
        Limit earned = Limit.of(100, Rate.perMinute(100)).withInitialTokens(0); // new clients start empty
        Limit half = Limit.of(100, Rate.perMinute(100)).withInitialTokens(50);
        // ---

        Policy empty = Policy.of("earned", earned);
        Policy halfFull = Policy.of("half", half);
        assertThat(memory.tryAcquire("new", empty).allowed()).isFalse();
        assertThat(memory.tryAcquire("new", halfFull, 50).allowed()).isTrue();
        time.advance(Duration.ofMinutes(1)); // full again
        assertThat(memory.inspect("new", empty).tokens()).isEqualTo(100);
        time.advance(Duration.ofMinutes(1)); // full for a minute: forgotten
        assertThat(memory.inspect("new", empty).tokens()).isZero();
        assertThat(memory.inspect("new", halfFull).tokens()).isEqualTo(50);
    }

    @Test
    void conceptsInspectAndReset() {
        // --- concepts: inspect and reset
        Policy perClient = Policy.of("per-client", Limit.of(10, Rate.perSecond(5)));
        RateLimiter limiter = InMemoryRateLimiter.create();
        limiter.tryAcquire("alice", perClient, 4);

        BucketState state = limiter.inspect("alice", perClient);
        System.out.println(
                state.tokens() + " tokens, full again in " + state.untilFull()); // 6 tokens, full again in PT0.8S

        limiter.reset("alice", perClient);
        System.out.println(limiter.inspect("alice", perClient).tokens() + " tokens"); // 10 tokens
        // ---

        assertThat(state.tokens()).isEqualTo(6);
        assertThat(state.untilFull()).isBetween(Duration.ofMillis(700), Duration.ofMillis(800));
        assertThat(limiter.inspect("alice", perClient).tokens()).isEqualTo(10);
        assertThat(limiter.tryAcquire("alice", perClient, 10).allowed()).isTrue();
    }

    @Test
    void conceptsCost() {
        Policy perClient = Policy.of("per-client", Limit.of(10, Rate.perSecond(5)));
        RateLimiter limiter = InMemoryRateLimiter.create();

        // --- concepts: cost
        Decision upload = limiter.tryAcquire("alice", perClient, 4); // an expensive call takes 4 tokens
        // ---

        assertThat(upload.remaining()).isEqualTo(6);
    }

    @Test
    void conceptsChargeAfterTheFact() {
        ManualTimeSource clock = new ManualTimeSource(1_000_000_000L);
        RateLimiter limiter = InMemoryRateLimiter.builder().timeSource(clock).build();
        Completion completion = () -> 25_000;

        // --- concepts: charge
        Policy llmTokens = Policy.of("llm-tokens", Limit.of(10_000, Rate.perMinute(10_000)))
                .withMaxDebt(Duration.ofMinutes(5)); // a team may owe up to 5 minutes of refill
        if (limiter.tryAcquire("team-7", llmTokens).allowed()) {
            long used = completion.tokensUsed(); // known once the model has answered
            BucketState after = limiter.charge("team-7", llmTokens, used - 1); // the 1 was taken by tryAcquire
        }
        // ---

        Decision next = limiter.tryAcquire("team-7", llmTokens);
        assertThat(next.allowed()).isFalse();
        assertThat(next.retryAfter()).isEqualTo(Duration.ofMillis(90_006));
        assertThat(limiter.inspect("team-7", llmTokens).tokens()).isZero();
        clock.advance(Duration.ofMillis(90_005));
        assertThat(limiter.tryAcquire("team-7", llmTokens).allowed()).isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(limiter.tryAcquire("team-7", llmTokens).allowed()).isTrue();
        // by default a team owes at most one bucket more: 10 000 tokens, a minute of refill
        Policy byDefault = Policy.of("llm-tokens", Limit.of(10_000, Rate.perMinute(10_000)));
        limiter.charge("team-8", byDefault, 25_000);
        assertThat(limiter.tryAcquire("team-8", byDefault).retryAfter()).isEqualTo(Duration.ofMillis(60_006));
    }

    @Test
    void conceptsCalendarQuotas() {
        ManualTimeSource clock = new ManualTimeSource(1_795_000_000_000_000L); // 18 November 2026, 11:06 UTC
        RateLimiter limiter = InMemoryRateLimiter.builder().timeSource(clock).build();

        // --- concepts: calendar quotas
        Policy monthly = Policy.of("partner-api", Limit.of(20, Rate.perSecond(10))) // bursts of 20, 10 a second
                .withQuota(CalendarQuota.of(10_000, CalendarQuota.Period.MONTH, ZoneId.of("Europe/Paris")));

        Decision decision = limiter.tryAcquire("partner-7", monthly);
        // ---

        assertThat(decision.allowed()).isTrue();
        assertThat(decision.limitIndex()).isZero(); // 19 tokens left in the bucket, fewer than the quota's 9 999
        for (int i = 0; i < 9_998; i++) {
            clock.advance(Duration.ofMillis(100));
            limiter.tryAcquire("partner-7", monthly);
        }
        clock.advance(Duration.ofMillis(100));
        Decision last = limiter.tryAcquire("partner-7", monthly);
        Decision refused = limiter.tryAcquire("partner-7", monthly);
        assertThat(last.allowed()).isTrue();
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.limitIndex()).isEqualTo(1);
        // until midnight on 1 December in Paris: 30 November, 23:00 UTC
        assertThat(refused.retryAfter())
                .isEqualTo(
                        Duration.of(1_796_079_600_000_000L - clock.nowMicros(), java.time.temporal.ChronoUnit.MICROS));
    }

    @Test
    void conceptsPermits() {
        RateLimiter limiter = InMemoryRateLimiter.create();
        ConcurrencyLimit five = ConcurrencyLimit.of("exports", 5);
        List<Permit> running = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            running.add(limiter.tryAcquirePermit("customer-42", five));
        }
        Exports exports = new Exports(limiter);

        String whileFiveRun = exports.export();
        running.get(0).close();
        String afterOneEnded = exports.export();

        assertThat(whileFiveRun).isEqualTo("429");
        assertThat(afterOneEnded).isEqualTo("200");
        assertThat(limiter.inFlight("customer-42", five)).isEqualTo(4);
    }

    /** The concepts page's export endpoint. */
    private record Exports(RateLimiter limiter) {

        String export() {
            // --- concepts: permits
            ConcurrencyLimit exports = ConcurrencyLimit.of("exports", 5); // at most 5 exports of one customer at once
            try (Permit permit = limiter.tryAcquirePermit("customer-42", exports)) {
                if (!permit.acquired()) {
                    return tooManyExports(); // 5 are running: nothing was taken, closing gives nothing back
                }
                return runExport(); // the slot is given back when the block ends, whatever happens in it
            }
            // ---
        }

        private String tooManyExports() {
            return "429";
        }

        private String runExport() {
            return "200";
        }
    }

    /** A language model's answer, as the concepts page's example has one. */
    private interface Completion {
        long tokensUsed();
    }

    @Test
    @Timeout(10)
    void conceptsAcquireWithWait() throws InterruptedException {
        RateLimiter limiter = InMemoryRateLimiter.create();
        List<String> sent = new ArrayList<>();
        List<String> batch = List.of("a", "b", "c");

        // --- concepts: acquire
        Policy partnerApi = Policy.of("partner-api", Limit.of(1, Rate.perSecond(50)));
        for (String item : batch) {
            if (limiter.acquire("outbound", partnerApi, 1, Duration.ofSeconds(2))) {
                sent.add(item); // at most 50 per second reach the partner
            } else {
                break; // the wait would exceed 2 seconds: give up now rather than later
            }
        }
        // ---

        assertThat(sent).containsExactly("a", "b", "c");
    }

    @Test
    void conceptsManualTime() {
        // --- concepts: manual time
        ManualTimeSource time = new ManualTimeSource();
        RateLimiter limiter = InMemoryRateLimiter.builder().timeSource(time).build();
        Policy policy = Policy.of("test", Limit.of(1, Rate.perSecond(1)));

        limiter.tryAcquire("k", policy); // takes the only token
        boolean refused = !limiter.tryAcquire("k", policy).allowed();
        time.advance(Duration.ofSeconds(1));
        boolean allowedAgain = limiter.tryAcquire("k", policy).allowed();
        // ---

        assertThat(refused).isTrue();
        assertThat(allowedAgain).isTrue();
    }

    @Test
    void conceptsMemory() {
        // --- concepts: memory
        RateLimiter limiter =
                InMemoryRateLimiter.builder().maximumKeys(1_000_000).build();
        // ---

        assertThat(limiter).isNotNull();
    }

    @Test
    void conceptsListeners() {
        // --- concepts: listeners
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();
        LongAdder refused = new LongAdder();
        DecisionListener.Subscription counting = limiter.onDecision(event -> {
            if (event.outcome() == DecisionEvent.Outcome.REFUSED && !event.warmUp()) {
                refused.increment();
            }
        });

        Policy policy = Policy.of("one-per-minute", Limit.of(1, Rate.perMinute(1)));
        limiter.tryAcquire("alice", policy);
        limiter.tryAcquire("alice", policy); // refused: the listener counts it
        counting.cancel(); // no more events for this listener
        // ---

        limiter.tryAcquire("alice", policy);
        assertThat(refused.sum()).isEqualTo(1);
    }

    @Test
    void everyJavaExampleOfTheseDocsIsRunHere() {
        int examples = DocumentationExamples.assertRunBy(
                "tollgate-core/src/test/java/io/tollgate/DocumentationExamplesTest.java",
                "README.md",
                "docs/concepts.md");

        assertThat(examples).isGreaterThanOrEqualTo(8);
    }
}
