package dev.ordergate.channel.alipay;

import dev.ordergate.channel.ChannelRejection;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Alipay amounts: yuan as an exact decimal string, to fen with integer arithmetic only. */
public final class Yuan {

  private static final Pattern AMOUNT = Pattern.compile("(0|[1-9]\\d{0,10})(?:\\.(\\d{1,2}))?");

  private Yuan() {
  }

  /** "12.3" -> 1230, "0.01" -> 1; more than two decimals, a sign, an exponent or spaces are malformed. */
  public static long toCents(String yuan, String key) {
    Matcher m = yuan == null ? null : AMOUNT.matcher(yuan);
    if (m == null || !m.matches()) {
      throw ChannelRejection.malformed(key + " must be yuan with at most two decimals, e.g. 12.30");
    }
    String fraction = m.group(2) == null ? "" : m.group(2);
    long cents = fraction.isEmpty() ? 0 : Long.parseLong(fraction.length() == 1 ? fraction + "0" : fraction);
    return Long.parseLong(m.group(1)) * 100 + cents;
  }

  public static String of(long cents) {
    return cents / 100 + "." + (cents % 100 < 10 ? "0" : "") + cents % 100;
  }
}
