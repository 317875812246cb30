package io.tollgate.server.internal.tls;

import java.nio.file.Path;
import java.util.Objects;

/**
 * One port's TLS, as the server's file says ({@code server.tls}, {@code server.decision-tls}, {@code
 * server.management-tls}, {@code envoy.tls}).
 *
 * @param certificate the PEM file of the port's certificate, then the rest of its chain
 * @param privateKey the PEM file of the certificate's private key
 * @param clientCa the PEM file of the certificate authorities whose client certificates the port accepts, or null
 *     to ask for none
 * @param clientAuth whether a client certificate is required, optional, or not asked for
 */
public record TlsSettings(Path certificate, Path privateKey, Path clientCa, ClientAuth clientAuth) {

    /** Whether a port asks its clients for certificates. */
    public enum ClientAuth {
        /** It asks for none. */
        NONE,
        /** It asks, and a client without one is served (then known by its token alone). */
        OPTIONAL,
        /** It asks, and a client without a valid one cannot connect. */
        REQUIRED
    }

    /**
     * @throws NullPointerException if the certificate, the key or the client authentication is null
     * @throws IllegalArgumentException if client certificates are asked for without a certificate authority
     */
    public TlsSettings {
        Objects.requireNonNull(certificate, "certificate");
        Objects.requireNonNull(privateKey, "privateKey");
        Objects.requireNonNull(clientAuth, "clientAuth");
        if (clientAuth != ClientAuth.NONE && clientCa == null) {
            throw new IllegalArgumentException("client certificates need the certificate authorities that sign them");
        }
    }
}
