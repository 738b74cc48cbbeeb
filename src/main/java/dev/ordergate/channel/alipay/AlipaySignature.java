package dev.ordergate.channel.alipay;

import java.nio.charset.Charset;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * Alipay's asynchronous-notify signature ("RSA2"): SHA256withRSA over every parameter except
 * {@code sign} and {@code sign_type}, empty values dropped, sorted by key, joined {@code k=v&...}
 * from the decoded values as sent, encoded in the notification's charset. Pure functions.
 */
public final class AlipaySignature {

  private AlipaySignature() {
  }

  public static String content(Map<String, String> params) {
    StringBuilder sb = new StringBuilder();
    for (var e : new TreeMap<>(params).entrySet()) {
      String k = e.getKey();
      String v = e.getValue();
      if (k.equals("sign") || k.equals("sign_type") || k.isEmpty() || v == null || v.isEmpty()) {
        continue;
      }
      sb.append(sb.length() == 0 ? "" : "&").append(k).append('=').append(v);
    }
    return sb.toString();
  }

  /** True when any of {@code keys} verifies {@code params}' {@code sign}. */
  public static boolean verify(Map<String, String> params, Charset charset, Iterable<PublicKey> keys) {
    String sign = params.get("sign");
    if (sign == null) {
      return false;
    }
    byte[] signature;
    try {
      signature = Base64.getMimeDecoder().decode(sign);
    } catch (IllegalArgumentException e) {
      return false;
    }
    byte[] content = content(params).getBytes(charset);
    boolean ok = false;
    for (PublicKey key : keys) {
      try {
        Signature s = Signature.getInstance("SHA256withRSA");
        s.initVerify(key);
        s.update(content);
        ok |= s.verify(signature);
      } catch (GeneralSecurityException e) {
        // this key does not verify it
      }
    }
    return ok;
  }

  public static String sign(Map<String, String> params, Charset charset, PrivateKey key) {
    try {
      Signature s = Signature.getInstance("SHA256withRSA");
      s.initSign(key);
      s.update(content(params).getBytes(charset));
      return Base64.getEncoder().encodeToString(s.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA256withRSA signing failed", e);
    }
  }
}
