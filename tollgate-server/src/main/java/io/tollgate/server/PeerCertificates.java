package io.tollgate.server;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.security.auth.x500.X500Principal;

/** What a connection's client certificate says of the client, where the port asks for one. Stateless. */
final class PeerCertificates {

    private PeerCertificates() {}

    /**
     * Returns the subject of the client certificate that {@code channel}'s TLS handshake verified, in the
     * canonical form callers are named by; null without TLS or without a client certificate.
     */
    static String subject(Channel channel) {
        SslHandler tls = channel.pipeline().get(SslHandler.class);
        if (tls == null) {
            return null;
        }
        try {
            Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate certificate
                    ? certificate.getSubjectX500Principal().getName(X500Principal.CANONICAL)
                    : null;
        } catch (SSLPeerUnverifiedException e) {
            return null; // no client certificate: the port asks for one optionally, or not at all
        }
    }
}
