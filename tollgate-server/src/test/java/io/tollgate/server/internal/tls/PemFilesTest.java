package io.tollgate.server.internal.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.testing.RequiredBinary;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateKey;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Private keys in each form openssl writes them, read as the server reads its TLS files. */
class PemFilesTest {

    @TempDir
    Path dir;

    @Test
    void readsEachKeyFormOpensslWrites() throws Exception {
        Path openssl = RequiredBinary.find("openssl", "openssl");
        Path sec1 = dir.resolve("ec.key"); // SEC 1, with its curve: EC PRIVATE KEY
        Path pkcs1 = dir.resolve("rsa.key"); // PKCS #1: RSA PRIVATE KEY
        Path pkcs8 = dir.resolve("pkcs8.key"); // PKCS #8: PRIVATE KEY
        run(openssl.toString(), "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", sec1.toString());
        run(openssl.toString(), "genrsa", "-traditional", "-out", pkcs1.toString(), "2048");
        run(openssl.toString(), "pkcs8", "-topk8", "-nocrypt", "-in", sec1.toString(), "-out", pkcs8.toString());

        assertThat(Files.readString(sec1)).startsWith("-----BEGIN EC PRIVATE KEY-----");
        assertThat(Files.readString(pkcs1)).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertThat(read(sec1)).isInstanceOf(ECPrivateKey.class);
        assertThat(read(pkcs1)).isInstanceOf(RSAPrivateKey.class);
        assertThat(((ECPrivateKey) read(pkcs8)).getS()).isEqualTo(((ECPrivateKey) read(sec1)).getS());
    }

    @Test
    void aFileWithoutAKeyOrCertificateIsNamed() throws Exception {
        Path empty = Files.writeString(dir.resolve("empty.pem"), "nothing here\n");

        assertThatThrownBy(() -> read(empty))
                .hasMessage("'" + empty + "' holds no PEM private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or"
                        + " EC PRIVATE KEY)");
        assertThatThrownBy(() -> PemFiles.certificates(Files.readAllBytes(empty), empty))
                .hasMessage("'" + empty + "' holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
    }

    private static PrivateKey read(Path file) throws Exception {
        return PemFiles.privateKey(Files.readAllBytes(file), file);
    }

    private static void run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
    }
}
