package dev.ordergate.channel.alipay;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * Alipay's open-API gateway protocol (outbound), pure functions: a request's {@code sign} is
 * SHA256withRSA by the app private key over every parameter except {@code sign} ({@code sign_type} and
 * {@code biz_content} included), empty values dropped, sorted, {@code k=v&...}, UTF-8. The answer
 * {@code {"<method with _>_response":{...},"sign":"..."}} is signed by Alipay over the exact text of
 * that node, which {@link #responseNode} cuts out of the raw body without re-serializing it.
 */
public final class AlipayProtocol {

  private AlipayProtocol() {
  }

  public static String requestContent(Map<String, String> params) {
    StringBuilder sb = new StringBuilder();
    for (var e : new TreeMap<>(params).entrySet()) {
      if (e.getKey().equals("sign") || e.getKey().isEmpty() || e.getValue() == null || e.getValue().isEmpty()) {
        continue;
      }
      sb.append(sb.length() == 0 ? "" : "&").append(e.getKey()).append('=').append(e.getValue());
    }
    return sb.toString();
  }

  public static String sign(String content, PrivateKey key) {
    try {
      Signature s = Signature.getInstance("SHA256withRSA");
      s.initSign(key);
      s.update(content.getBytes(StandardCharsets.UTF_8));
      return Base64.getEncoder().encodeToString(s.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA256withRSA signing failed", e);
    }
  }

  /** True when any of {@code keys} verifies {@code signatureBase64} over {@code content}. */
  public static boolean verify(String content, String signatureBase64, Iterable<PublicKey> keys) {
    if (signatureBase64 == null) {
      return false;
    }
    byte[] signature;
    try {
      signature = Base64.getMimeDecoder().decode(signatureBase64);
    } catch (IllegalArgumentException e) {
      return false;
    }
    boolean ok = false;
    for (PublicKey key : keys) {
      try {
        Signature s = Signature.getInstance("SHA256withRSA");
        s.initVerify(key);
        s.update(content.getBytes(StandardCharsets.UTF_8));
        ok |= s.verify(signature);
      } catch (GeneralSecurityException e) {
        // not this key
      }
    }
    return ok;
  }

  /** {@code alipay.trade.close} -> {@code alipay_trade_close_response}. */
  public static String responseKey(String method) {
    return method.replace('.', '_') + "_response";
  }

  /**
   * The raw JSON text of the object under {@code key} at the top level of {@code body}, exactly as
   * sent; null when absent. Scans strings and escapes so braces inside values do not count.
   */
  public static String responseNode(String body, String key) {
    String quoted = "\"" + key + "\"";
    int at = body.indexOf(quoted);
    if (at < 0) {
      return null;
    }
    int i = at + quoted.length();
    while (i < body.length() && (Character.isWhitespace(body.charAt(i)) || body.charAt(i) == ':')) {
      i++;
    }
    if (i >= body.length() || body.charAt(i) != '{') {
      return null;
    }
    int depth = 0;
    boolean inString = false;
    for (int j = i; j < body.length(); j++) {
      char c = body.charAt(j);
      if (inString) {
        if (c == '\\') {
          j++;
        } else if (c == '"') {
          inString = false;
        }
      } else if (c == '"') {
        inString = true;
      } else if (c == '{') {
        depth++;
      } else if (c == '}' && --depth == 0) {
        return body.substring(i, j + 1);
      }
    }
    return null;
  }
}
