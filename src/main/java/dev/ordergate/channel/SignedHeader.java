package dev.ordergate.channel;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The {@code t=<unix seconds>,<scheme>=<hex HMAC-SHA256>,...} header shape that Stripe and ordergate
 * share: parsing (unknown parts ignored, malformed candidates dropped) and the HMAC with a constant-time
 * comparison. Pure functions.
 */
public record SignedHeader(Long t, Map<String, List<byte[]>> candidates) {

  private static final Pattern SECONDS = Pattern.compile("\\d{1,12}");
  private static final Pattern HEX64 = Pattern.compile("[0-9a-fA-F]{64}");

  /** Null when the header is absent, too long, or has no timestamp. */
  public static SignedHeader parse(String header, List<String> schemes) {
    if (header == null || header.length() > 8192) {
      return null;
    }
    Long t = null;
    Map<String, List<byte[]>> candidates = new HashMap<>();
    for (String part : header.split(",")) {
      int eq = part.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String k = part.substring(0, eq).trim();
      String v = part.substring(eq + 1).trim();
      if (k.equals("t") && SECONDS.matcher(v).matches()) {
        t = Long.parseLong(v);
      } else if (schemes.contains(k) && HEX64.matcher(v).matches()) {
        candidates.computeIfAbsent(k, x -> new ArrayList<>()).add(java.util.HexFormat.of().parseHex(v.toLowerCase()));
      }
    }
    return t == null ? null : new SignedHeader(t, candidates);
  }

  public boolean fresh(long now, long toleranceSeconds) {
    return Math.abs(now - t) <= toleranceSeconds;
  }

  /** True when some candidate of {@code scheme} equals {@code expected} (every one is compared). */
  public boolean matches(String scheme, byte[] expected) {
    boolean ok = false;
    for (byte[] candidate : candidates.getOrDefault(scheme, List.of())) {
      ok |= MessageDigest.isEqual(expected, candidate);
    }
    return ok;
  }

  public boolean has(String scheme) {
    return candidates.containsKey(scheme);
  }

  /** One Mac per thread: looking up the provider on every callback costs more than the HMAC itself. */
  private static final ThreadLocal<Mac> MAC = ThreadLocal.withInitial(() -> {
    try {
      return Mac.getInstance("HmacSHA256");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  });

  /** HMAC-SHA256(secret as UTF-8, prefix as ASCII + body). */
  public static byte[] hmac(String secret, String prefix, byte[] body) {
    try {
      Mac mac = MAC.get();
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      mac.update(prefix.getBytes(StandardCharsets.US_ASCII));
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 key rejected", e);
    }
  }
}
