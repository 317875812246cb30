package io.tollgate.server;

import io.tollgate.testing.RequiredBinary;
import java.nio.file.Path;

/**
 * examples/nginx as it is, on free ports: two of Debian's nginx ({@code nginx.conf}, {@code nginx-2.conf}, both
 * including {@code tollgate.conf}) asking Tollgate through {@code auth_request}. nginx passes only 2xx, 401 and 403
 * on, so the example writes the client's 429 itself from what Tollgate answered.
 */
class NginxForwardAuthTest extends ForwardAuthExampleContract {

    @Override
    Path binary() {
        return RequiredBinary.find("nginx", "nginx");
    }

    @Override
    String example() {
        return "examples/nginx";
    }

    @Override
    ProcessBuilder proxy(Path binary, Path dir, int index, int port) {
        return new ProcessBuilder(
                binary.toString(),
                "-p",
                dir.toString(),
                "-c",
                index == 0 ? "nginx.conf" : "nginx-2.conf",
                "-g",
                "daemon off;");
    }

    @Override
    String refusalBody(int retryAfter) {
        return "{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                + "\"detail\":\"Rate limit exceeded; retry in " + retryAfter + " s.\",\"retry_after\":" + retryAfter
                + "}\n";
    }
}
