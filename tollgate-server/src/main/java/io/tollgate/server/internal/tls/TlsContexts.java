package io.tollgate.server.internal.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.util.List;
import javax.net.ssl.SSLException;

/**
 * The TLS contexts of the server's ports over {@link TlsFiles}: for Netty's HTTP ports (HTTP/1.1) and for gRPC
 * (HTTP/2, negotiated by ALPN), both TLS 1.2 and 1.3 only, on the JDK's TLS, whose handshakes ask the files'
 * managers each time, so that a rotated certificate needs no new context. Stateless.
 */
public final class TlsContexts {

    /** The protocols every TLS port speaks: no older one. */
    public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    private TlsContexts() {}

    /** Returns the context of an HTTP/1.1 port. */
    public static SslContext http(TlsFiles files) throws SSLException {
        SslContextBuilder builder = SslContextBuilder.forServer(files.keyManager())
                .sslProvider(SslProvider.JDK)
                .protocols(PROTOCOLS)
                .clientAuth(
                        switch (files.settings().clientAuth()) {
                            case NONE -> ClientAuth.NONE;
                            case OPTIONAL -> ClientAuth.OPTIONAL;
                            case REQUIRED -> ClientAuth.REQUIRE;
                        });
        if (files.trustManager() != null) {
            builder.trustManager(files.trustManager());
        }
        return builder.build();
    }

    /** Returns the context of a gRPC port: HTTP/2 by ALPN. */
    public static io.grpc.netty.shaded.io.netty.handler.ssl.SslContext grpc(TlsFiles files) throws SSLException {
        io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder builder = GrpcSslContexts.configure(
                        io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder.forServer(files.keyManager()),
                        io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider.JDK)
                .protocols(PROTOCOLS)
                .clientAuth(
                        switch (files.settings().clientAuth()) {
                            case NONE -> io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth.NONE;
                            case OPTIONAL -> io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth.OPTIONAL;
                            case REQUIRED -> io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth.REQUIRE;
                        });
        if (files.trustManager() != null) {
            builder.trustManager(files.trustManager());
        }
        return builder.build();
    }
}
