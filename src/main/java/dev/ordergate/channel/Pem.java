package dev.ordergate.channel;

import dev.ordergate.config.ConfigException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Key material from a config value ending in {@code Pem}: the PEM text itself, a path to a PEM file,
 * or (as Alipay's console hands it out) the bare Base64 of the key. RSA only. A value that cannot be
 * read stops startup naming its key, never echoing the value.
 */
public final class Pem {

  /** Put at the top of every generated sandbox key file; a channel using one must be devOnly. */
  public static final String DEV_MARKER = "DEVELOPMENT ONLY";

  private static final Pattern BLOCK = Pattern.compile(
      "-----BEGIN ([A-Z ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");

  private Pem() {
  }

  /** The PEM text of {@code value}: itself when it holds a PEM block or bare Base64, else the file it names. */
  public static String text(String value, String key) {
    if (value.contains("-----BEGIN") || value.matches("[A-Za-z0-9+/=\\s]{64,}")) {
      return value;
    }
    try {
      return Files.readString(Path.of(value), StandardCharsets.US_ASCII);
    } catch (IOException | RuntimeException e) {
      throw new ConfigException(key, "is neither PEM text nor a readable PEM file (" + e.getClass().getSimpleName() + ")");
    }
  }

  public static PublicKey publicKey(String value, String key) {
    String text = text(value, key);
    try {
      Matcher m = BLOCK.matcher(text);
      if (!m.find()) {
        return rsa().generatePublic(new X509EncodedKeySpec(base64(text)));
      }
      return switch (m.group(1)) {
        case "PUBLIC KEY" -> rsa().generatePublic(new X509EncodedKeySpec(base64(m.group(2))));
        case "CERTIFICATE" -> CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(text.substring(m.start()).getBytes(StandardCharsets.US_ASCII)))
            .getPublicKey();
        default -> throw new ConfigException(key, "must hold a PUBLIC KEY or CERTIFICATE block, found " + m.group(1));
      };
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new ConfigException(key, "holds no readable RSA public key or certificate");
    }
  }

  public static PrivateKey privateKey(String value, String key) {
    String text = text(value, key);
    try {
      Matcher m = BLOCK.matcher(text);
      if (!m.find()) {
        return rsa().generatePrivate(new PKCS8EncodedKeySpec(base64(text)));
      }
      if (!m.group(1).equals("PRIVATE KEY")) {
        throw new ConfigException(key, "must be a PKCS#8 PRIVATE KEY block (convert with openssl pkcs8 -topk8 -nocrypt), found "
            + m.group(1));
      }
      return rsa().generatePrivate(new PKCS8EncodedKeySpec(base64(m.group(2))));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new ConfigException(key, "holds no readable PKCS#8 RSA private key");
    }
  }

  /** True when {@code value} (text or the file it names) is marked as a development-only key. */
  public static boolean isDevelopmentOnly(String value, String key) {
    return text(value, key).contains(DEV_MARKER);
  }

  public static String encode(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
        .encodeToString(der) + "\n-----END " + type + "-----\n";
  }

  private static byte[] base64(String s) {
    return Base64.getMimeDecoder().decode(s.trim());
  }

  private static KeyFactory rsa() throws GeneralSecurityException {
    return KeyFactory.getInstance("RSA");
  }
}
