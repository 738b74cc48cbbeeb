package dev.ordergate.channel.stripe;

import dev.ordergate.channel.SignedHeader;

import java.util.HexFormat;
import java.util.List;

/**
 * Stripe webhook signatures: {@code Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=...][,v0=...]},
 * v1 = HMAC-SHA256(endpoint secret as UTF-8, "<t>.<raw body>"). Any {@code v1} made by any configured
 * secret verifies (constant-time); {@code v0} is ignored; the timestamp must be within the tolerance
 * both ways (stripe-java only rejects old ones; a future one is refused here too). Pure functions.
 */
public final class StripeSignature {

  public static final String HEADER = "Stripe-Signature";
  private static final List<String> SCHEMES = List.of("v1");

  private StripeSignature() {
  }

  public static boolean verify(String header, byte[] body, List<String> secrets, long now, long toleranceSeconds) {
    SignedHeader h = SignedHeader.parse(header, SCHEMES);
    if (h == null || !h.has("v1") || !h.fresh(now, toleranceSeconds)) {
      return false;
    }
    boolean ok = false;
    for (String secret : secrets) {
      ok |= h.matches("v1", hmac(secret, h.t(), body));
    }
    return ok;
  }

  public static byte[] hmac(String secret, long t, byte[] body) {
    return SignedHeader.hmac(secret, t + ".", body);
  }

  public static String header(String secret, long t, byte[] body) {
    return "t=" + t + ",v1=" + HexFormat.of().formatHex(hmac(secret, t, body));
  }
}
