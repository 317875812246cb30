package io.tollgate.server;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.security.auth.x500.X500Principal;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificate authorities and the certificates they sign, made by the tests (BouncyCastle), written as the PEM
 * files a server's TLS settings name: a server certificate for {@code localhost} and {@code 127.0.0.1}, client
 * certificates of any subject, valid, expired or of another authority.
 */
final class TestCertificates {

    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    /** A certificate and its key. */
    record Issued(X509Certificate certificate, PrivateKey key, X509Certificate issuer) {

        /** Writes the certificate (then its issuer: the chain) and the key as PEM files, and returns their paths. */
        Pem pem(Path dir, String name) throws IOException {
            Path certificate = dir.resolve(name + ".crt");
            Path key = dir.resolve(name + ".key");
            write(certificate, pemOf(this.certificate) + pemOf(issuer));
            write(key, pemOf(this.key));
            return new Pem(certificate, key);
        }

        /** An SSLContext that presents this certificate (a client's) and trusts {@code authority}. */
        SSLContext clientContext(Authority authority) throws GeneralSecurityException, IOException {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry("client", key, new char[0], new X509Certificate[] {certificate, issuer});
            KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyManagers.init(keys, new char[0]);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), authority.trustManagers(), null);
            return context;
        }
    }

    /** The paths of a written certificate (with its chain) and key. */
    record Pem(Path certificate, Path key) {}

    /** A certificate authority: its own key and self-signed certificate. */
    record Authority(X509Certificate certificate, PrivateKey key) {

        /** Issues a server certificate for localhost, 127.0.0.1 and ::1, valid for a day. */
        Issued server() throws GeneralSecurityException, IOException {
            return issue("CN=localhost,O=Tollgate Tests", Instant.now().minusSeconds(60), Duration.ofDays(1), true);
        }

        /** Issues a client certificate of {@code subject}, valid for a day. */
        Issued client(String subject) throws GeneralSecurityException, IOException {
            return issue(subject, Instant.now().minusSeconds(60), Duration.ofDays(1), false);
        }

        /** Issues a client certificate of {@code subject} that expired an hour ago. */
        Issued expiredClient(String subject) throws GeneralSecurityException, IOException {
            return issue(subject, Instant.now().minus(Duration.ofDays(2)), Duration.ofDays(1), false);
        }

        /** Writes this authority's certificate as a PEM file, the bundle a server's client-ca names. */
        Path pem(Path file) throws IOException {
            write(file, pemOf(certificate));
            return file;
        }

        /** Trust managers that trust this authority alone. */
        javax.net.ssl.TrustManager[] trustManagers() throws GeneralSecurityException, IOException {
            KeyStore trusted = KeyStore.getInstance("PKCS12");
            trusted.load(null, null);
            trusted.setCertificateEntry("ca", certificate);
            TrustManagerFactory factory = TrustManagerFactory.getInstance("PKIX");
            factory.init(trusted);
            return factory.getTrustManagers();
        }

        /** An SSLContext that trusts this authority alone, for a client without a certificate. */
        SSLContext trustingContext() throws GeneralSecurityException, IOException {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trustManagers(), null);
            return context;
        }

        private Issued issue(String subject, Instant from, Duration validity, boolean server)
                throws GeneralSecurityException, IOException {
            KeyPair pair = keyPair();
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
                    certificate.getSubjectX500Principal(),
                    BigInteger.valueOf(SERIALS.incrementAndGet()),
                    Date.from(from),
                    Date.from(from.plus(validity)),
                    new X500Principal(subject),
                    pair.getPublic());
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(
                    Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            builder.addExtension(
                    Extension.extendedKeyUsage,
                    false,
                    new ExtendedKeyUsage(server ? KeyPurposeId.id_kp_serverAuth : KeyPurposeId.id_kp_clientAuth));
            if (server) {
                builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                    new GeneralName(GeneralName.dNSName, "localhost"),
                    new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                    new GeneralName(
                            GeneralName.iPAddress, InetAddress.getByName("::1").getHostAddress())
                }));
            }
            return new Issued(sign(builder, key), pair.getPrivate(), certificate);
        }
    }

    private TestCertificates() {}

    /** Makes a certificate authority named {@code name}. */
    static Authority authority(String name) throws GeneralSecurityException, IOException {
        KeyPair pair = keyPair();
        Instant now = Instant.now().minusSeconds(60);
        X500Principal subject = new X500Principal("CN=" + name + ",O=Tollgate Tests");
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
                subject,
                BigInteger.valueOf(SERIALS.incrementAndGet()),
                Date.from(now),
                Date.from(now.plus(Duration.ofDays(30))),
                subject,
                pair.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        return new Authority(sign(builder, pair.getPrivate()), pair.getPrivate());
    }

    private static KeyPair keyPair() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(256, new SecureRandom());
        return generator.generateKeyPair();
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
            throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter()
                    .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer)));
        } catch (org.bouncycastle.operator.OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    /** Returns a certificate as PEM, or a private key as PKCS #8 PEM ({@code PRIVATE KEY}), as openssl 3 writes it. */
    static String pemOf(Object object) {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
            pem.writeObject(object instanceof PrivateKey key ? new JcaPKCS8Generator(key, null) : object);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return text.toString();
    }

    static void write(Path file, String text) throws IOException {
        // written beside and moved over, as a secret's files are swapped whole
        Path written = java.nio.file.Files.writeString(file.resolveSibling(file.getFileName() + ".new"), text);
        java.nio.file.Files.move(
                written,
                file,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
