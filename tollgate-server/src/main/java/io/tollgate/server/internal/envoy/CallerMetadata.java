package io.tollgate.server.internal.envoy;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.tollgate.server.internal.access.Callers;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;

/**
 * Puts what names a call's caller in the call's context, where the service reads it: the {@code authorization}
 * metadata, and the subject of the client certificate that the TLS handshake verified (canonical, as callers are
 * named). Stateless.
 */
final class CallerMetadata implements ServerInterceptor {

    /** The call's {@code authorization} metadata, or null. */
    static final Context.Key<String> AUTHORIZATION = Context.key("tollgate-authorization");

    /** The subject of the call's client certificate, or null without one. */
    static final Context.Key<String> SUBJECT = Context.key("tollgate-certificate-subject");

    private static final Metadata.Key<String> AUTHORIZATION_HEADER =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        Context context = Context.current()
                .withValue(AUTHORIZATION, headers.get(AUTHORIZATION_HEADER))
                .withValue(SUBJECT, subject(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)));
        return Contexts.interceptCall(context, call, headers, next);
    }

    /**
     * Returns the caller that the current call's metadata names among {@code callers}; null if it names none.
     */
    static Callers.Caller caller(Callers callers) {
        return callers.identify(AUTHORIZATION.get(), SUBJECT.get());
    }

    /** Returns why the current call names no caller, for its {@code UNAUTHENTICATED} status; {@code service} names it. */
    static String unauthenticated(String service) {
        return AUTHORIZATION.get() == null
                ? service + " needs a caller's bearer token in the authorization metadata: Bearer TOKEN"
                : "the bearer token is not one of the callers' tokens";
    }

    private static String subject(SSLSession session) {
        if (session == null) {
            return null;
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate certificate
                    ? certificate.getSubjectX500Principal().getName(X500Principal.CANONICAL)
                    : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }
}
