package dev.ordergate.logging;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;

/**
 * {@code %safeMsg} in logback.xml: the formatted message with every control character (C0, DEL,
 * C1, U+2028/U+2029) and lone surrogate written as {@code \\uXXXX}, so nothing a client sent (a
 * path with ESC sequences, a forged newline) can forge a log line or drive a terminal.
 */
public final class SafeMessageConverter extends MessageConverter {

  @Override
  public String convert(ILoggingEvent event) {
    return escape(super.convert(event));
  }

  /** C0, DEL, C1 and the Unicode line and paragraph separators: what {@code InputGuard} refuses too. */
  public static boolean isControl(char c) {
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029';
  }

  public static String escape(String s) {
    if (s == null) {
      return null;
    }
    StringBuilder out = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        if (out != null) {
          out.append(c).append(s.charAt(i + 1));
        }
        i++;
        continue;
      }
      boolean bad = isControl(c) || Character.isSurrogate(c);
      if (bad && out == null) {
        out = new StringBuilder(s.length() + 16).append(s, 0, i);
      }
      if (bad) {
        out.append(String.format("\\u%04X", (int) c));
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? s : out.toString();
  }
}
