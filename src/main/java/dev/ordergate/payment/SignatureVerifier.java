package dev.ordergate.payment;

import dev.ordergate.config.ChannelConfig;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Verifies {@code X-Ordergate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>}
 * over the raw body bytes, before anything parses them. Any configured secret of the channel may
 * verify (rotation); several {@code v1} values may be sent. Comparison is constant-time; a
 * timestamp outside the channel's tolerance fails, so a captured request cannot be replayed later.
 */
public final class SignatureVerifier {

  public static final String HEADER = "X-Ordergate-Signature";
  private static final Pattern SECONDS = Pattern.compile("\\d{1,12}");

  private final Clock clock;

  public SignatureVerifier(Clock clock) {
    this.clock = clock;
  }

  public boolean verify(ChannelConfig channel, String header, byte[] body) {
    if (header == null || header.length() > 4096) {
      return false;
    }
    Long t = null;
    List<byte[]> candidates = new ArrayList<>();
    for (String part : header.split(",")) {
      int eq = part.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String k = part.substring(0, eq).trim();
      String v = part.substring(eq + 1).trim();
      if (k.equals("t") && SECONDS.matcher(v).matches()) {
        t = Long.parseLong(v);
      } else if (k.equals("v1") && v.length() == 64) {
        try {
          candidates.add(HexFormat.of().parseHex(v.toLowerCase()));
        } catch (IllegalArgumentException notHex) {
          // ignored: a malformed candidate cannot match
        }
      }
    }
    if (t == null || candidates.isEmpty()) {
      return false;
    }
    long now = clock.instant().getEpochSecond();
    if (Math.abs(now - t) > channel.toleranceSeconds()) {
      return false;
    }
    boolean ok = false;
    for (String secret : channel.secrets()) {
      byte[] expected = sign(secret, t, body);
      for (byte[] candidate : candidates) {
        ok |= MessageDigest.isEqual(expected, candidate);
      }
    }
    return ok;
  }

  /** One Mac per thread: looking up the provider on every callback costs more than the HMAC itself. */
  private static final ThreadLocal<Mac> MAC = ThreadLocal.withInitial(() -> {
    try {
      return Mac.getInstance("HmacSHA256");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  });

  /** HMAC-SHA256(secret, "t." + body): what a gateway (or the drill and replay tools) sends. */
  public static byte[] sign(String secret, long t, byte[] body) {
    try {
      Mac mac = MAC.get();
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 key rejected", e);
    }
  }

  public static String header(String secret, long t, byte[] body) {
    return "t=" + t + ",v1=" + HexFormat.of().formatHex(sign(secret, t, body));
  }
}
