package dev.ordergate.auth;

import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Salted slow password hashes with the JDK's PBKDF2WithHmacSHA256, stored as
 * {@code pbkdf2-sha256$<iterations>$<salt, base64>$<hash, base64>}. Checking one costs as much as
 * making it (hundreds of milliseconds at the default): callers run it off the event loop.
 */
public final class PasswordHash {

  public static final int DEFAULT_ITERATIONS = 600_000;
  /** Below this a configured hash is refused at startup: it would be cheap to guess against. */
  public static final int MIN_ITERATIONS = 100_000;
  private static final Pattern FORMAT =
      Pattern.compile("pbkdf2-sha256\\$(\\d{1,9})\\$([A-Za-z0-9+/]{22,}={0,2})\\$([A-Za-z0-9+/]{43}=)");
  private static final String ALGORITHM = "PBKDF2WithHmacSHA256";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final int iterations;
  private final byte[] salt;
  private final byte[] hash;

  private PasswordHash(int iterations, byte[] salt, byte[] hash) {
    this.iterations = iterations;
    this.salt = salt;
    this.hash = hash;
  }

  /** Parses a stored hash; the message says what is wrong (used for the config key's error). */
  public static PasswordHash parse(String stored) {
    Matcher m = stored == null ? null : FORMAT.matcher(stored);
    if (m == null || !m.matches()) {
      throw new IllegalArgumentException("must be a hash made by scripts/hash-password (pbkdf2-sha256$...)");
    }
    int iterations = Integer.parseInt(m.group(1));
    if (iterations < MIN_ITERATIONS) {
      throw new IllegalArgumentException("has " + iterations + " iterations; at least " + MIN_ITERATIONS + " are required");
    }
    byte[] salt = Base64.getDecoder().decode(m.group(2));
    if (salt.length < 16) {
      throw new IllegalArgumentException("salt must be at least 16 bytes");
    }
    return new PasswordHash(iterations, salt, Base64.getDecoder().decode(m.group(3)));
  }

  /** A new hash of {@code password} with a fresh 16-byte salt. */
  public static String create(char[] password, int iterations) {
    byte[] salt = new byte[16];
    RANDOM.nextBytes(salt);
    return "pbkdf2-sha256$" + iterations + "$" + Base64.getEncoder().encodeToString(salt) + "$"
        + Base64.getEncoder().encodeToString(derive(password, salt, iterations));
  }

  /** Blocking (the whole cost of the hash); constant-time comparison. */
  public boolean matches(char[] password) {
    return MessageDigest.isEqual(hash, derive(password, salt, iterations));
  }

  private static byte[] derive(char[] password, byte[] salt, int iterations) {
    PBEKeySpec spec = new PBEKeySpec(password, salt, iterations, 256);
    try {
      return SecretKeyFactory.getInstance(ALGORITHM).generateSecret(spec).getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(ALGORITHM + " is part of every Java 17 runtime", e);
    } finally {
      spec.clearPassword();
    }
  }
}
