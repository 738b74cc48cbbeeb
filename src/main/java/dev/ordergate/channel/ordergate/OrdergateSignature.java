package dev.ordergate.channel.ordergate;

import dev.ordergate.channel.SignedHeader;

import java.util.HexFormat;
import java.util.List;

/**
 * ordergate's own signature, {@code X-Ordergate-Signature: t=<unix seconds>,v2=<hex>}, where v2 is
 * HMAC-SHA256(secret, "<t>.<channel>.<raw body>"): the channel name is signed, so a request signed
 * for one channel never verifies on another. The legacy form {@code v1} = HMAC-SHA256(secret,
 * "<t>.<raw body>") verifies only while the channel's transition period lasts. Pure functions.
 */
public final class OrdergateSignature {

  public static final String HEADER = "X-Ordergate-Signature";
  private static final List<String> SCHEMES = List.of("v1", "v2");

  private OrdergateSignature() {
  }

  /**
   * True when {@code header} carries a timestamp within {@code toleranceSeconds} of {@code now} (both
   * ways) and a v2 value (or, when {@code acceptV1}, a v1 value) made by one of {@code secrets}.
   * Every candidate is compared in constant time.
   */
  public static boolean verify(String header, byte[] body, String channel, List<String> secrets, long now,
                               long toleranceSeconds, boolean acceptV1) {
    SignedHeader h = SignedHeader.parse(header, SCHEMES);
    if (h == null || !h.fresh(now, toleranceSeconds)) {
      return false;
    }
    boolean ok = false;
    for (String secret : secrets) {
      if (h.has("v2")) {
        ok |= h.matches("v2", v2(secret, h.t(), channel, body));
      }
      if (acceptV1 && h.has("v1")) {
        ok |= h.matches("v1", v1(secret, h.t(), body));
      }
    }
    return ok;
  }

  /** HMAC-SHA256(secret, "t.channel." + body). */
  public static byte[] v2(String secret, long t, String channel, byte[] body) {
    return SignedHeader.hmac(secret, t + "." + channel + ".", body);
  }

  /** The legacy form: HMAC-SHA256(secret, "t." + body). */
  public static byte[] v1(String secret, long t, byte[] body) {
    return SignedHeader.hmac(secret, t + ".", body);
  }

  /** What a sender (a gateway proxy, the drill, the replay tool) puts into {@link #HEADER}. */
  public static String header(String secret, long t, String channel, byte[] body) {
    return "t=" + t + ",v2=" + HexFormat.of().formatHex(v2(secret, t, channel, body));
  }

  public static String legacyHeader(String secret, long t, byte[] body) {
    return "t=" + t + ",v1=" + HexFormat.of().formatHex(v1(secret, t, body));
  }
}
