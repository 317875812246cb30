package io.tollgate.server;

import io.tollgate.testing.RequiredBinary;
import java.nio.file.Path;

/**
 * examples/caddy as it is, on free ports: Debian's Caddy run twice from one {@code Caddyfile} (its port from
 * {@code PORT}) asking Tollgate through {@code forward_auth}. Caddy hands any answer but a 2xx back to the client
 * as it is, so the client gets Tollgate's own refusal.
 */
class CaddyForwardAuthTest extends ForwardAuthExampleContract {

    @Override
    Path binary() {
        return RequiredBinary.find("caddy", "caddy");
    }

    @Override
    String example() {
        return "examples/caddy";
    }

    @Override
    ProcessBuilder proxy(Path binary, Path dir, int index, int port) {
        ProcessBuilder builder =
                new ProcessBuilder(binary.toString(), "run", "--adapter", "caddyfile", "--config", "Caddyfile");
        builder.environment().put("PORT", Integer.toString(port));
        // Caddy keeps its state (certificates, the last configuration) under these: here, not in the user's home
        builder.environment().put("XDG_CONFIG_HOME", dir.resolve("config").toString());
        builder.environment().put("XDG_DATA_HOME", dir.resolve("data").toString());
        return builder;
    }

    @Override
    String refusalBody(int retryAfter) {
        return "{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                + "\"detail\":\"Rate limit exceeded for per-ip; retry in " + retryAfter + " s.\","
                + "\"policies\":[\"per-ip\"],\"retry_after\":" + retryAfter + "}";
    }
}
