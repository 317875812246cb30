package io.tollgate.server.internal.tls;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads certificates and private keys from the PEM text that openssl, cert-manager and Kubernetes write:
 * certificates ({@code CERTIFICATE}, several in a row for a chain or a bundle) and an unencrypted private key in
 * PKCS #8 ({@code PRIVATE KEY}), PKCS #1 ({@code RSA PRIVATE KEY}) or SEC 1 ({@code EC PRIVATE KEY}). Each
 * failure is an {@link IllegalArgumentException} that names the file and what is wrong, never the key. Stateless.
 */
final class PemFiles {

    private static final Pattern BLOCK =
            Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");

    /** rsaEncryption, 1.2.840.113549.1.1.1, with its NULL parameters, as PKCS #8 names an RSA key. */
    private static final byte[] RSA_ALGORITHM = {
        0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00
    };

    /** id-ecPublicKey, 1.2.840.10045.2.1, as PKCS #8 names an EC key (its curve follows). */
    private static final byte[] EC_PUBLIC_KEY = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

    private PemFiles() {}

    /**
     * Returns the certificates of {@code pem}, in order.
     *
     * @throws IllegalArgumentException if it holds none, or one cannot be read, naming {@code file}
     */
    static List<X509Certificate> certificates(byte[] pem, Path file) {
        List<X509Certificate> certificates = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (Block block : blocks(pem)) {
                if (block.type().equals("CERTIFICATE")) {
                    Certificate read = factory.generateCertificate(new ByteArrayInputStream(block.der()));
                    certificates.add((X509Certificate) read);
                }
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException(
                    "'" + file + "' holds a certificate that cannot be read: " + e.getMessage(), e);
        }
        if (certificates.isEmpty()) {
            throw new IllegalArgumentException("'" + file + "' holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        return certificates;
    }

    /**
     * Returns the private key of {@code pem}: the first key block in it.
     *
     * @throws IllegalArgumentException if it holds no key, an encrypted one, or one that cannot be read, naming
     *     {@code file}
     */
    static PrivateKey privateKey(byte[] pem, Path file) {
        for (Block block : blocks(pem)) {
            byte[] pkcs8 = switch (block.type()) {
                case "PRIVATE KEY" -> block.der();
                case "RSA PRIVATE KEY" -> sequence(INTEGER_ZERO, RSA_ALGORITHM, octetString(block.der()));
                case "EC PRIVATE KEY" ->
                    sequence(
                            INTEGER_ZERO,
                            sequence(EC_PUBLIC_KEY, curveOf(block.der(), file)),
                            octetString(block.der()));
                case "ENCRYPTED PRIVATE KEY" ->
                    throw new IllegalArgumentException("'" + file + "' holds an encrypted private key: give it"
                            + " unencrypted (openssl pkcs8 -topk8 -nocrypt), with the file's permissions"
                            + " guarding it");
                default -> null;
            };
            if (pkcs8 != null) {
                return pkcs8Key(pkcs8, file);
            }
        }
        throw new IllegalArgumentException("'" + file + "' holds no PEM private key (-----BEGIN PRIVATE KEY-----,"
                + " RSA PRIVATE KEY or EC PRIVATE KEY)");
    }

    private static PrivateKey pkcs8Key(byte[] pkcs8, Path file) {
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(pkcs8);
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                // not of this algorithm: try the next
            }
        }
        throw new IllegalArgumentException(
                "'" + file + "' holds a private key that is not RSA, EC or EdDSA, or cannot be read");
    }

    /** The curve of a SEC 1 key: the object identifier in its [0] parameters. */
    private static byte[] curveOf(byte[] sec1, Path file) {
        // ECPrivateKey ::= SEQUENCE { version INTEGER, privateKey OCTET STRING, [0] parameters, [1] publicKey }
        int at = headerLength(sec1, 0);
        while (at < sec1.length) {
            int tag = sec1[at] & 0xff;
            int header = headerLength(sec1, at);
            int length = contentLength(sec1, at);
            if (tag == 0xa0) {
                byte[] curve = new byte[length];
                System.arraycopy(sec1, at + header, curve, 0, length);
                return curve;
            }
            at += header + length;
        }
        throw new IllegalArgumentException("'" + file + "' holds an EC private key without its curve: give it in"
                + " PKCS #8 (openssl pkcs8 -topk8 -nocrypt)");
    }

    private record Block(String type, byte[] der) {}

    private static List<Block> blocks(byte[] pem) {
        List<Block> blocks = new ArrayList<>();
        Matcher matcher = BLOCK.matcher(new String(pem, StandardCharsets.US_ASCII));
        while (matcher.find()) {
            try {
                blocks.add(new Block(matcher.group(1), Base64.getMimeDecoder().decode(matcher.group(2))));
            } catch (IllegalArgumentException e) {
                // not base64 after all: not a block this reads
            }
        }
        return blocks;
    }

    private static final byte[] INTEGER_ZERO = {0x02, 0x01, 0x00};

    private static byte[] sequence(byte[]... parts) {
        return tagged(0x30, parts);
    }

    private static byte[] octetString(byte[] content) {
        return tagged(0x04, content);
    }

    private static byte[] tagged(int tag, byte[]... parts) {
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            content.writeBytes(part);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int length = content.size();
        if (length < 0x80) {
            out.write(length);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(length >>> (8 * i));
            }
        }
        out.writeBytes(content.toByteArray());
        return out.toByteArray();
    }

    private static int headerLength(byte[] der, int at) {
        int first = der[at + 1] & 0xff;
        return first < 0x80 ? 2 : 2 + (first & 0x7f);
    }

    private static int contentLength(byte[] der, int at) {
        int first = der[at + 1] & 0xff;
        if (first < 0x80) {
            return first;
        }
        int length = 0;
        for (int i = 0; i < (first & 0x7f); i++) {
            length = (length << 8) | (der[at + 2 + i] & 0xff);
        }
        return length;
    }
}
