package io.tollgate.server;

import io.tollgate.server.CheckApi.Answer;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the management page reads besides the admin API's policies, top keys and buckets: {@code GET
 * /admin/rates} (decisions per second per policy over the last 15 minutes, from {@link MeterHistory}) and {@code
 * GET /admin/store} (whether the store answers, each Redis node's circuit, Redis's latency over the last minute).
 * Thread-safe.
 */
final class LiveViews {

    private static final Map<String, String> NO_STORE = Map.of("Cache-Control", "no-store");

    private final MeterHistory history;
    private final StoreMonitor store;
    private final String description;

    LiveViews(MeterHistory history, StoreMonitor store, String description) {
        this.history = history;
        this.store = store;
        this.description = description;
    }

    /**
     * The decisions per second of each policy, oldest first, one value per {@link MeterHistory#INTERVAL}: {@code
     * {"interval_seconds":2,"end":"...","policies":[{"policy":"P","allowed":[...],"refused":[...],
     * "degraded":[...]}]}}, degraded being the decisions the failure policy made (allowed or refused).
     */
    Answer rates() {
        MeterHistory.Rates rates = history.rates();
        return Answer.json(200, NO_STORE, JsonText.of(generator -> {
            generator.writeStartObject();
            generator.writeNumberField("interval_seconds", (long) rates.intervalSeconds());
            generator.writeStringField(
                    "end", Instant.ofEpochMilli(rates.endMillis()).toString());
            generator.writeArrayFieldStart("policies");
            for (Map.Entry<String, double[][]> policy : rates.policies().entrySet()) {
                generator.writeStartObject();
                generator.writeStringField("policy", policy.getKey());
                String[] names = {"allowed", "refused", "degraded"};
                for (int measure = 0; measure < names.length; measure++) {
                    generator.writeArrayFieldStart(names[measure]);
                    for (double value : policy.getValue()[measure]) {
                        generator.writeNumber(Math.round(value * 1000) / 1000.0);
                    }
                    generator.writeEndArray();
                }
                generator.writeEndObject();
            }
            generator.writeEndArray();
            generator.writeEndObject();
        }));
    }

    /**
     * The store now: {@code {"store":"redis at ...","answers":true,"problem":null,"nodes":[{"node":"host:port",
     * "circuit":"closed"}],"latency":{"window_seconds":60,"calls":N,"p50_ms":..,"p99_ms":..,"p999_ms":..}}};
     * {@code latency} is null in memory or before Redis answered a call. Asks the store, waiting at most a few
     * seconds: call it where a thread may block.
     */
    Answer store() {
        Optional<String> problem;
        try {
            problem = store.check().toCompletableFuture().get(5, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            problem = Optional.of("it did not answer within 5 s");
        } catch (ExecutionException e) {
            problem = Optional.of(String.valueOf(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problem = Optional.of("interrupted");
        }
        Optional<String> why = problem;
        Map<String, String> circuits = history.circuits();
        MeterHistory.Latency latency = history.latency();
        return Answer.json(200, NO_STORE, JsonText.of(generator -> {
            generator.writeStartObject();
            generator.writeStringField("store", description);
            generator.writeBooleanField("answers", why.isEmpty());
            generator.writeStringField("problem", why.orElse(null));
            generator.writeArrayFieldStart("nodes");
            for (Map.Entry<String, String> circuit : circuits.entrySet()) {
                generator.writeStartObject();
                generator.writeStringField("node", circuit.getKey());
                generator.writeStringField("circuit", circuit.getValue());
                generator.writeEndObject();
            }
            generator.writeEndArray();
            if (latency == null) {
                generator.writeNullField("latency");
            } else {
                generator.writeObjectFieldStart("latency");
                generator.writeNumberField(
                        "window_seconds", MeterHistory.LATENCY_SAMPLES * MeterHistory.INTERVAL.toSeconds());
                generator.writeNumberField("calls", latency.calls());
                for (Map.Entry<String, Double> quantile : latency.quantiles().entrySet()) {
                    generator.writeNumberField(
                            quantile.getKey() + "_ms", Math.round(quantile.getValue() * 1_000_000) / 1000.0);
                }
                generator.writeEndObject();
            }
            generator.writeEndObject();
        }));
    }
}
