package io.tollgate.server.internal.tls;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * One port's certificate, private key and client certificate authorities, read from their PEM files and read
 * again when they change ({@link #reloadIfChanged}): each handshake after a change presents the new certificate
 * and trusts the new authorities, connections already made keep theirs, and a file half written or a key that is
 * not the certificate's keeps the ones in use (logged) until the files are whole again.
 *
 * <p>Thread-safe.
 */
public final class TlsFiles {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    private final TlsSettings settings;
    private final String name;
    private final SwappedKeyManager keyManager = new SwappedKeyManager();
    private final SwappedTrustManager trustManager;
    /** The digest of the files' bytes last read, loaded or not; guarded by this. */
    private byte[] lastRead;
    /** How many times the files were put in use; guarded by this. */
    private int generation;

    /**
     * Reads the files of {@code settings}.
     *
     * @param name the port's setting, for messages, such as {@code server.tls}
     * @throws IllegalArgumentException if a file cannot be read, holds no certificate or key, or the key is not
     *     the certificate's, naming the setting and the file
     */
    public TlsFiles(TlsSettings settings, String name) {
        this.settings = settings;
        this.name = name;
        this.trustManager = settings.clientCa() == null ? null : new SwappedTrustManager();
        try {
            Loaded loaded = load(read());
            apply(loaded);
            lastRead = loaded.digest();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }

    /** Returns the settings the files were named by. */
    public TlsSettings settings() {
        return settings;
    }

    /** Returns the key manager that handshakes ask for the certificate and key in use. */
    public KeyManager keyManager() {
        return keyManager;
    }

    /** Returns the trust manager that checks client certificates against the authorities in use, or null. */
    public TrustManager trustManager() {
        return trustManager;
    }

    /** Returns the certificate in use, presented to clients. */
    public X509Certificate certificate() {
        return keyManager.current.chain()[0];
    }

    /**
     * Reads the files again and, if they changed and are whole, puts what they hold in use for the handshakes
     * that follow. Returns whether it did; never throws (a failure is logged once per content of the files).
     */
    public synchronized boolean reloadIfChanged() {
        byte[][] files;
        try {
            files = read();
        } catch (IllegalArgumentException e) {
            return false; // a file missing for a moment, as when Kubernetes swaps a secret's files
        }
        byte[] digest = digest(files);
        if (Arrays.equals(digest, lastRead)) {
            return false;
        }
        lastRead = digest;
        try {
            apply(load(files));
        } catch (IllegalArgumentException e) {
            LOG.log(
                    Level.WARNING,
                    "tollgate: {0} files changed but were not put in use; the ones before stay: {1}",
                    name,
                    e.getMessage());
            return false;
        }
        LOG.log(
                Level.INFO,
                "tollgate: {0} now presents the certificate of {1}, valid until {2}",
                name,
                certificate().getSubjectX500Principal().getName(),
                certificate().getNotAfter().toInstant());
        return true;
    }

    private record Loaded(X509Certificate[] chain, PrivateKey key, List<X509Certificate> authorities, byte[] digest) {}

    private byte[][] read() {
        Path ca = settings.clientCa();
        return new byte[][] {
            read(settings.certificate(), "certificate"),
            read(settings.privateKey(), "private-key"),
            ca == null ? new byte[0] : read(ca, "client-ca")
        };
    }

    private byte[] read(Path file, String setting) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(setting + ": cannot read '" + file + "': "
                    + (e instanceof java.nio.file.NoSuchFileException
                            ? "no such file"
                            : e.getClass().getSimpleName()));
        }
    }

    private Loaded load(byte[][] files) {
        List<X509Certificate> chain = PemFiles.certificates(files[0], settings.certificate());
        PrivateKey key = PemFiles.privateKey(files[1], settings.privateKey());
        if (!pairs(key, chain.get(0))) {
            throw new IllegalArgumentException("the private key in '" + settings.privateKey()
                    + "' is not the key of the certificate in '" + settings.certificate() + "'");
        }
        List<X509Certificate> authorities =
                settings.clientCa() == null ? List.of() : PemFiles.certificates(files[2], settings.clientCa());
        return new Loaded(chain.toArray(X509Certificate[]::new), key, authorities, digest(files));
    }

    private void apply(Loaded loaded) {
        try {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            char[] password = new char[0];
            // each generation its own alias: a handshake that chose the one before a swap still finds its key
            String alias = "tollgate-" + (++generation);
            keys.setKeyEntry(alias, loaded.key(), password, loaded.chain());
            KeyManagerFactory keyFactory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyFactory.init(keys, password);
            X509ExtendedKeyManager chosen = (X509ExtendedKeyManager) keyFactory.getKeyManagers()[0];
            X509ExtendedTrustManager trusted = null;
            if (trustManager != null) {
                KeyStore authorities = KeyStore.getInstance("PKCS12");
                authorities.load(null, null);
                for (int i = 0; i < loaded.authorities().size(); i++) {
                    authorities.setCertificateEntry(
                            "ca-" + i, loaded.authorities().get(i));
                }
                TrustManagerFactory trustFactory = TrustManagerFactory.getInstance("PKIX");
                trustFactory.init(authorities);
                trusted = (X509ExtendedTrustManager) trustFactory.getTrustManagers()[0];
            }
            keyManager.use(new KeyAndChain(alias, chosen, loaded.chain()));
            if (trustManager != null) {
                trustManager.current = trusted;
            }
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("the certificate and key cannot be used: " + e.getMessage(), e);
        }
    }

    /** Whether {@code key} signs what the certificate's public key verifies. */
    private static boolean pairs(PrivateKey key, X509Certificate certificate) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "RSASSA-PSS" -> "RSASSA-PSS";
            default -> key.getAlgorithm(); // Ed25519, Ed448
        };
        try {
            byte[] challenge = new byte[32];
            ThreadLocalRandom.current().nextBytes(challenge);
            Signature signer = Signature.getInstance(algorithm);
            if (algorithm.equals("RSASSA-PSS")) {
                signer.setParameter(new java.security.spec.PSSParameterSpec(
                        "SHA-256", "MGF1", java.security.spec.MGF1ParameterSpec.SHA256, 32, 1));
            }
            signer.initSign(key);
            signer.update(challenge);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            if (algorithm.equals("RSASSA-PSS")) {
                verifier.setParameter(new java.security.spec.PSSParameterSpec(
                        "SHA-256", "MGF1", java.security.spec.MGF1ParameterSpec.SHA256, 32, 1));
            }
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(challenge);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static byte[] digest(byte[][] files) {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            for (byte[] file : files) {
                sha256.update(Integer.toString(file.length).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                sha256.update(file);
            }
            return sha256.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private record KeyAndChain(String alias, X509ExtendedKeyManager manager, X509Certificate[] chain) {}

    /**
     * Answers each handshake with the certificate and key in use at that moment; the generation before stays
     * known by its alias, so that a handshake that chose it just before a swap gets its own chain and key.
     */
    private static final class SwappedKeyManager extends X509ExtendedKeyManager {
        volatile KeyAndChain current;
        private volatile KeyAndChain previous;

        synchronized void use(KeyAndChain next) {
            previous = current;
            current = next;
        }

        private X509ExtendedKeyManager of(String alias) {
            KeyAndChain now = current;
            if (now.alias().equals(alias)) {
                return now.manager();
            }
            KeyAndChain before = previous;
            return before != null && before.alias().equals(alias) ? before.manager() : now.manager();
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return current.manager().chooseEngineServerAlias(keyType, issuers, engine);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return current.manager().chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return current.manager().getServerAliases(keyType, issuers);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return of(alias).getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return of(alias).getPrivateKey(alias);
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return null; // a server's key manager: it is never a client
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return null;
        }
    }

    /** Checks each handshake's client certificate against the authorities in use at that moment. */
    private static final class SwappedTrustManager extends X509ExtendedTrustManager {
        volatile X509ExtendedTrustManager current;

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            current.checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            current.checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current.checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            throw new CertificateException("a server's trust manager checks clients only");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            throw new CertificateException("a server's trust manager checks clients only");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("a server's trust manager checks clients only");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return current.getAcceptedIssuers();
        }
    }
}
