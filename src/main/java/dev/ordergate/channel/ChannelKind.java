package dev.ordergate.channel;

import java.util.Arrays;
import java.util.stream.Collectors;

/** The wire formats ordergate speaks; {@code id} is the value of {@code payments.channels.<name>.kind}. */
public enum ChannelKind {
  ORDERGATE("ordergate"),
  WECHATPAY_V3("wechatpay-v3"),
  ALIPAY("alipay"),
  STRIPE("stripe");

  private final String id;

  ChannelKind(String id) {
    this.id = id;
  }

  public String id() {
    return id;
  }

  /** Null when {@code id} names no kind. */
  public static ChannelKind of(String id) {
    for (ChannelKind k : values()) {
      if (k.id.equals(id)) {
        return k;
      }
    }
    return null;
  }

  public static String ids() {
    return Arrays.stream(values()).map(ChannelKind::id).collect(Collectors.joining(", "));
  }
}
