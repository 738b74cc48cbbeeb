package dev.ordergate.channel;

import dev.ordergate.channel.alipay.AlipayChannel;
import dev.ordergate.channel.ordergate.OrdergateChannel;
import dev.ordergate.channel.stripe.StripeChannel;
import dev.ordergate.channel.wechatpay.WechatPayChannel;
import dev.ordergate.config.ChannelConfig;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds each configured channel's {@link PaymentChannel} by its kind. */
public final class Channels {

  private Channels() {
  }

  public static PaymentChannel of(ChannelConfig config, Clock clock) {
    return switch (config.kind()) {
      case ORDERGATE -> new OrdergateChannel(config, clock);
      case WECHATPAY_V3 -> new WechatPayChannel(config, clock);
      case ALIPAY -> new AlipayChannel(config, clock);
      case STRIPE -> new StripeChannel(config, clock);
    };
  }

  public static Map<String, PaymentChannel> all(Map<String, ChannelConfig> configs, Clock clock) {
    Map<String, PaymentChannel> out = new LinkedHashMap<>();
    configs.forEach((name, c) -> out.put(name, of(c, clock)));
    return Map.copyOf(out);
  }
}
