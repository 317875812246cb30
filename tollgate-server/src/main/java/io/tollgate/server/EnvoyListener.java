package io.tollgate.server;

import io.tollgate.server.internal.envoy.EnvoyService;
import io.tollgate.server.internal.tls.TlsSettings;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Where Envoy's rate limit service listens, and what it serves ({@code envoy}).
 *
 * @param port the port, 0 for a free one
 * @param host the address it binds
 * @param config the file or directory of rate limits, in envoyproxy/ratelimit's format
 * @param setup the rate limits read from it, and how answers are written
 * @param tls its TLS, or null for plain gRPC
 */
record EnvoyListener(int port, String host, Path config, EnvoyService.Setup setup, TlsSettings tls) {

    /** Whether the port may be reached from elsewhere by a caller without a certificate. */
    boolean reachableWithoutCertificates() {
        return !Listeners.isThisHostOnly(host) && !Listeners.requiresCertificates(tls);
    }

    /** Returns whether {@code other} listens where this does: the settings that take effect at a start. */
    boolean listensAs(EnvoyListener other) {
        return other != null && port == other.port && host.equals(other.host) && Objects.equals(tls, other.tls);
    }
}
