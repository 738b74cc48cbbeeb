package dev.ordergate.config;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What may be shown of a configured value, and whether a configured token is guessable. A secret
 * is never echoed: errors name the key. Credentials in URLs ({@code https://user:pass@host}) are
 * cut out of anything logged or stored.
 */
public final class Secrets {

  /** Keys whose values are never shown (secrets, tokens, API keys, passwords, URLs that may carry them). */
  private static final Pattern SENSITIVE_KEY =
      Pattern.compile("(?i).*(secret|token|password|passwd|credential|key|url|dsn).*");
  /** The user-info part of a URL: scheme://user[:password]@ */
  private static final Pattern URL_USERINFO = Pattern.compile("(?i)\\b([a-z][a-z0-9+.-]*://)[^/?#@\\s]*@");
  /** Shannon estimate over the token's own characters; 64 bits is 16 random hex digits. */
  public static final double MIN_TOKEN_BITS = 64;

  private Secrets() {
  }

  public static boolean sensitive(String key) {
    return SENSITIVE_KEY.matcher(key).matches();
  }

  /** The value as a config error may show it: not at all for a sensitive key, else credentials cut and short. */
  public static String shown(String key, Object value) {
    if (sensitive(key)) {
      return "(value not shown)";
    }
    String s = redactUrls(String.valueOf(value));
    return s.length() > 80 ? s.substring(0, 80) + "..." : s;
  }

  /** {@code text} with the user-info of every URL in it replaced by {@code ***}. */
  public static String redactUrls(String text) {
    return text == null ? null : URL_USERINFO.matcher(text).replaceAll("$1***@");
  }

  /**
   * Estimated entropy of {@code token} in bits: length times the Shannon entropy of its character
   * distribution. Sixteen identical characters score 0; a random hex string of n digits about 4n.
   */
  public static double entropyBits(String token) {
    Map<Integer, Integer> counts = new HashMap<>();
    token.codePoints().forEach(c -> counts.merge(c, 1, Integer::sum));
    int n = token.codePointCount(0, token.length());
    double perChar = 0;
    for (int count : counts.values()) {
      double p = (double) count / n;
      perChar -= p * Math.log(p) / Math.log(2);
    }
    return perChar * n;
  }

  /** Refuses a token shorter than 16 characters or with less than {@link #MIN_TOKEN_BITS}, naming {@code key}. */
  public static void requireStrong(String key, String token) {
    if (token.length() < 16) {
      throw new ConfigException(key, "must be at least 16 characters");
    }
    double bits = entropyBits(token);
    if (bits < MIN_TOKEN_BITS) {
      throw new ConfigException(key, String.format(java.util.Locale.ROOT,
          "is too predictable (about %.0f bits of entropy, at least %.0f needed; e.g. openssl rand -hex 24)",
          bits, MIN_TOKEN_BITS));
    }
  }
}
