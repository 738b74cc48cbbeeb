package dev.ordergate.channel.wechatpay;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * WeChat Pay API v3 notification signatures: SHA256withRSA over
 * {@code Wechatpay-Timestamp + "\n" + Wechatpay-Nonce + "\n" + <raw body> + "\n"}, Base64 in
 * {@code Wechatpay-Signature}. Pure functions over the raw bytes. A signature probe
 * ({@code WECHATPAY/SIGNTEST/...}) is not Base64 and simply does not verify.
 */
public final class WechatPaySignature {

  public static final String SIGNATURE = "Wechatpay-Signature";
  public static final String SERIAL = "Wechatpay-Serial";
  public static final String TIMESTAMP = "Wechatpay-Timestamp";
  public static final String NONCE = "Wechatpay-Nonce";
  public static final String SIGNATURE_TYPE = "Wechatpay-Signature-Type";
  public static final String RSA_TYPE = "WECHATPAY2-SHA256-RSA2048";

  private static final Pattern SECONDS = Pattern.compile("\\d{1,12}");

  private WechatPaySignature() {
  }

  public static byte[] message(String timestamp, String nonce, byte[] body) {
    byte[] head = (timestamp + "\n" + nonce + "\n").getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[head.length + body.length + 1];
    System.arraycopy(head, 0, out, 0, head.length);
    System.arraycopy(body, 0, out, head.length, body.length);
    out[out.length - 1] = '\n';
    return out;
  }

  /** True when {@code timestamp} is Unix seconds within {@code toleranceSeconds} of {@code now}, both ways. */
  public static boolean fresh(String timestamp, long now, long toleranceSeconds) {
    return timestamp != null && SECONDS.matcher(timestamp).matches()
        && Math.abs(now - Long.parseLong(timestamp)) <= toleranceSeconds;
  }

  public static boolean verify(PublicKey key, String timestamp, String nonce, byte[] body, String signatureBase64) {
    byte[] signature;
    try {
      signature = Base64.getDecoder().decode(signatureBase64);
    } catch (IllegalArgumentException notBase64) {
      return false;
    }
    try {
      Signature s = Signature.getInstance("SHA256withRSA");
      s.initVerify(key);
      s.update(message(timestamp, nonce, body));
      return s.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  public static String sign(PrivateKey key, String timestamp, String nonce, byte[] body) {
    try {
      Signature s = Signature.getInstance("SHA256withRSA");
      s.initSign(key);
      s.update(message(timestamp, nonce, body));
      return Base64.getEncoder().encodeToString(s.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA256withRSA signing failed", e);
    }
  }
}
