package io.tollgate.server;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Coverage-guided fuzz tests (Jazzer) of everything the server reads from outside ({@link HostileInput}): no 5xx,
 * no exception escaping, memory bounded (Jazzer's limit of 2 GiB a run).
 *
 * <p>In the suite ({@code ./mvnw verify}: {@code tollgate-server/pom.xml}, execution {@code fuzz-briefly}, a JVM of
 * its own) Jazzer replays the inputs of {@link #everything} in {@code src/test/resources/io/tollgate/server/
 * HostileInputFuzzTestInputs/everything/} (seeds of each target, and every finding kept as a regression), then
 * fuzzes it for 20 s. A long run of one target, on demand (Jazzer fuzzes one target per JVM):
 *
 * <pre>JAZZER_FUZZ=1 ./mvnw -pl tollgate-server test -Dtest=HostileInputFuzzTest#decisionApi -Djazzer.max_duration=30m</pre>
 *
 * A finding is written to the target's inputs directory and fails the run: fix it, and keep the file there; to
 * replay it in the suite too, copy it to {@code everything/} with one byte more at its end, the target's number
 * ({@link HostileInput#TARGETS}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HostileInputFuzzTest {

    private static final HostileInput INPUT = new HostileInput();

    @FuzzTest(maxDuration = "5m")
    void publicPort(FuzzedDataProvider data) {
        INPUT.toPort(false, HostileInput.pieces(data));
    }

    @FuzzTest(maxDuration = "5m")
    void managementPort(FuzzedDataProvider data) {
        INPUT.toPort(true, HostileInput.pieces(data));
    }

    @FuzzTest(maxDuration = "5m")
    void decisionApi(FuzzedDataProvider data) {
        byte[] body = data.consumeRemainingAsBytes();
        byte[] head = ("POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[head.length + body.length];
        System.arraycopy(head, 0, request, 0, head.length);
        System.arraycopy(body, 0, request, head.length, body.length);
        INPUT.toPort(false, java.util.List.of(request));
    }

    @FuzzTest(maxDuration = "5m")
    void forwardAuth(FuzzedDataProvider data) throws Exception {
        INPUT.forwardAuth(data);
    }

    @FuzzTest(maxDuration = "5m")
    void clientIp(FuzzedDataProvider data) {
        INPUT.clientIp(data);
    }

    @FuzzTest(maxDuration = "5m")
    void envoy(byte[] request) throws Exception {
        INPUT.envoy(request);
    }

    @FuzzTest(maxDuration = "5m")
    void key(FuzzedDataProvider data) {
        HostileInput.boundedKey(data.consumeRemainingAsString());
    }

    @FuzzTest(maxDuration = "5m")
    void serverFile(FuzzedDataProvider data) {
        HostileInput.serverFile(data.consumeRemainingAsString());
    }

    @FuzzTest(maxDuration = "5m")
    void path(FuzzedDataProvider data) throws Exception {
        INPUT.path(data);
    }

    /**
     * Every target in one, the fuzzer choosing which by the last byte of the input: the suite's short
     * coverage-guided run, first in order, as Jazzer fuzzes the first fuzz test of a run and skips the others.
     */
    @Order(1)
    @FuzzTest(maxDuration = "20s")
    void everything(FuzzedDataProvider data) throws Exception {
        switch (data.consumeInt(0, 8)) {
            case 0 -> publicPort(data);
            case 1 -> managementPort(data);
            case 2 -> decisionApi(data);
            case 3 -> forwardAuth(data);
            case 4 -> clientIp(data);
            case 5 -> envoy(data.consumeRemainingAsBytes());
            case 6 -> key(data);
            case 7 -> serverFile(data);
            default -> path(data);
        }
    }
}
