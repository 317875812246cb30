package io.tollgate.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DeadlinesTest {

    private final Deadlines deadlines = new Deadlines(Duration.ofMillis(200));

    @AfterEach
    void close() {
        deadlines.close();
    }

    @Test
    void aCallThatOutlastsTheBudgetFailsWithATimeoutOnceTheBudgetIsSpent() {
        long start = System.nanoTime();

        CompletableFuture<String> call = deadlines.limit(new CompletableFuture<>());

        assertThatThrownBy(call::join)
                .isInstanceOf(CompletionException.class)
                .cause()
                .isInstanceOf(TimeoutException.class)
                .hasMessage("no answer within 200 ms");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(200L, 2_000L);
    }

    @Test
    void aCallThatCompletesInTimeKeepsItsAnswer() throws Exception {
        CompletableFuture<String> call = deadlines.limit(new CompletableFuture<>());

        call.complete("answer");
        TimeUnit.MILLISECONDS.sleep(400);

        assertThat(call.join()).isEqualTo("answer");
    }

    @Test
    void eachCallHasItsOwnBudgetCountedFromItsStart() throws Exception {
        CompletableFuture<String> first = deadlines.limit(new CompletableFuture<>());
        TimeUnit.MILLISECONDS.sleep(100);
        CompletableFuture<String> second = deadlines.limit(new CompletableFuture<>());

        first.handle((answer, failure) -> failure).join();

        assertThat(second).as("a hundred milliseconds from its deadline").isNotDone();
        assertThat(second.handle((answer, failure) -> failure).join()).isInstanceOf(TimeoutException.class);
    }

    @Test
    void callsFromManyThreadsAreAllEndedAfterAnIdlePause() throws Exception {
        deadlines
                .limit(new CompletableFuture<>())
                .handle((answer, failure) -> failure)
                .join();
        TimeUnit.MILLISECONDS.sleep(50); // the thread is parked with nothing to wait for
        ExecutorService threads = Executors.newFixedThreadPool(8);
        List<CompletableFuture<Object>> calls = new ArrayList<>();
        try {
            List<CompletableFuture<CompletableFuture<Object>>> started = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                int n = i;
                started.add(CompletableFuture.supplyAsync(
                        () -> {
                            CompletableFuture<Object> call = deadlines.limit(new CompletableFuture<>());
                            if (n % 2 == 0) {
                                call.complete(n);
                            }
                            return call;
                        },
                        threads));
            }
            started.forEach(call -> calls.add(call.join()));
        } finally {
            threads.shutdown();
        }

        for (int i = 0; i < calls.size(); i++) {
            Object outcome = calls.get(i)
                    .handle((answer, failure) -> failure != null ? failure : answer)
                    .join();
            if (i % 2 == 0) {
                assertThat(outcome).isEqualTo(i);
            } else {
                assertThat(outcome).isInstanceOf(TimeoutException.class);
            }
        }
    }
}
