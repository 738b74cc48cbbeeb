package dev.ordergate.channel.alipay;

import dev.ordergate.channel.ChannelRejection;

import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * An {@code application/x-www-form-urlencoded} body decoded from its raw bytes, in the charset the
 * notification names in its own {@code charset} parameter (else the Content-Type's, else UTF-8):
 * Alipay signs the decoded values in that charset. A repeated key or a bad escape is malformed.
 */
public record AlipayForm(Map<String, String> params, Charset charset) {

  private static final int MAX_PARAMS = 200;

  public static AlipayForm parse(byte[] raw, String contentType) {
    String ascii = new String(raw, StandardCharsets.ISO_8859_1);
    Charset charset = charsetOf(ascii, contentType);
    Map<String, String> params = new LinkedHashMap<>();
    if (ascii.isEmpty()) {
      throw ChannelRejection.malformed("empty form body");
    }
    for (String pair : ascii.split("&", -1)) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = decode(eq < 0 ? pair : pair.substring(0, eq), charset);
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1), charset);
      if (key.isEmpty() || params.put(key, value) != null) {
        throw ChannelRejection.malformed("form parameter " + (key.isEmpty() ? "(empty name)" : key) + " is empty or repeated");
      }
      if (params.size() > MAX_PARAMS) {
        throw ChannelRejection.malformed("too many form parameters");
      }
    }
    return new AlipayForm(Map.copyOf(params), charset);
  }

  private static Charset charsetOf(String ascii, String contentType) {
    String name = null;
    for (String pair : ascii.split("&")) {
      if (pair.startsWith("charset=")) {
        name = decode(pair.substring("charset=".length()), StandardCharsets.US_ASCII);
      }
    }
    if (name == null && contentType != null) {
      int at = contentType.toLowerCase(Locale.ROOT).indexOf("charset=");
      if (at >= 0) {
        name = contentType.substring(at + "charset=".length()).split(";")[0].trim().replace("\"", "");
      }
    }
    if (name == null || name.isEmpty()) {
      return StandardCharsets.UTF_8;
    }
    try {
      return Charset.forName(name);
    } catch (IllegalArgumentException e) {
      throw ChannelRejection.malformed("unsupported charset");
    }
  }

  /** Percent-decoding with {@code +} as space, strict about escapes. */
  static String decode(String s, Charset charset) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '+') {
        out.write(' ');
      } else if (c == '%') {
        if (i + 2 >= s.length()) {
          throw ChannelRejection.malformed("bad percent escape in form body");
        }
        int hi = Character.digit(s.charAt(i + 1), 16);
        int lo = Character.digit(s.charAt(i + 2), 16);
        if (hi < 0 || lo < 0) {
          throw ChannelRejection.malformed("bad percent escape in form body");
        }
        out.write(hi * 16 + lo);
        i += 2;
      } else {
        out.write(c);
      }
    }
    return out.toString(charset);
  }

  public String get(String key) {
    return params.get(key);
  }
}
