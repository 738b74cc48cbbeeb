package dev.ordergate.channel;

import dev.ordergate.channel.alipay.AlipayBill;
import dev.ordergate.channel.stripe.StripeBill;
import dev.ordergate.channel.wechatpay.WechatPayBill;
import dev.ordergate.config.ChannelConfig;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/** The bill source of each configured gateway channel whose outbound keys are set (as {@link GatewayClients}). */
public final class GatewayBills {

  private GatewayBills() {
  }

  /** Null when the channel has no gateway bill to fetch (kind ordergate, or outbound keys missing). */
  public static GatewayBill of(ChannelConfig config, Outbound outbound, Clock clock) {
    try {
      return switch (config.kind()) {
        case WECHATPAY_V3 -> new WechatPayBill(config, outbound, clock);
        case ALIPAY -> new AlipayBill(config, outbound, clock);
        case STRIPE -> new StripeBill(config, outbound);
        case ORDERGATE -> null;
      };
    } catch (IllegalArgumentException missingKeys) {
      return null;
    }
  }

  public static Map<String, GatewayBill> all(Map<String, ChannelConfig> configs, Outbound outbound, Clock clock) {
    Map<String, GatewayBill> out = new LinkedHashMap<>();
    configs.forEach((name, c) -> {
      GatewayBill bill = of(c, outbound, clock);
      if (bill != null) {
        out.put(name, bill);
      }
    });
    return Map.copyOf(out);
  }
}
