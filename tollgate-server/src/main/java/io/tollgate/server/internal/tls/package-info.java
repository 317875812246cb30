/**
 * TLS for the server's ports: a certificate chain and its private key read from PEM files, the certificate
 * authorities of client certificates, both read again when their files change (a certificate rotated without a
 * restart), TLS 1.2 and 1.3 only; for Netty's HTTP ports and for gRPC alike. Users configure it through the TLS
 * sections of the server's file (docs/configuration.md).
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that the server's own packages can reach
 * them; they may change or disappear in any release, including a patch release.
 */
package io.tollgate.server.internal.tls;
