package dev.ordergate.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One console account from {@code admin.operators.<name>}. {@code tag} is a digest of the stored
 * hash: a session remembers it, so a changed password (or a removed account) ends old sessions.
 */
public record OperatorAccount(String name, PasswordHash hash, String tag, boolean devOnly) {

  public static OperatorAccount of(String name, String storedHash, boolean devOnly) {
    return new OperatorAccount(name, PasswordHash.parse(storedHash), sha256(storedHash).substring(0, 16), devOnly);
  }

  public static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
    }
  }
}
