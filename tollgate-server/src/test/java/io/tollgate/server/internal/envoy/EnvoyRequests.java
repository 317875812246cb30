package io.tollgate.server.internal.envoy;

import com.google.protobuf.InvalidProtocolBufferException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Policy;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Decides raw {@code ShouldRateLimit} request bytes as Envoy's service does, for the fuzz tests in the server's
 * package: the protobuf read, the descriptors matched against a file of limits, the decision in memory.
 */
public final class EnvoyRequests {

    private final RateLimitDecisions decisions;
    private final EnvoyService.Setup setup;

    /** Decides against the limits of {@code file}, with {@code policies} for its {@code tollgate_policy} entries. */
    public EnvoyRequests(Path file, Map<String, Policy> policies) {
        decisions = new RateLimitDecisions(InMemoryRateLimiter.create(), new EnvoyMetrics(new SimpleMeterRegistry()));
        setup = new EnvoyService.Setup(EnvoyRateLimits.load(file, policies), true);
    }

    /**
     * Reads {@code bytes} as a request and decides it; returns the response, or null for bytes that are no
     * request or a request the service refuses as invalid. Anything else thrown is a finding.
     */
    public RateLimitResponse decide(byte[] bytes) throws Exception {
        RateLimitRequest request;
        try {
            request = RateLimitRequest.parseFrom(bytes);
        } catch (InvalidProtocolBufferException notARequest) {
            return null;
        }
        try {
            return decisions.decide(request, setup).get(5, TimeUnit.SECONDS);
        } catch (RateLimitDecisions.InvalidRequest invalid) {
            return null;
        }
    }
}
