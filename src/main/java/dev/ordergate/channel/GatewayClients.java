package dev.ordergate.channel;

import dev.ordergate.channel.alipay.AlipayClient;
import dev.ordergate.channel.stripe.StripeClient;
import dev.ordergate.channel.wechatpay.WechatPayClient;
import dev.ordergate.config.ChannelConfig;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The outbound client of each configured channel that can open payments: a gateway kind with its
 * outbound keys configured (WeChat Pay: merchant key, serial, notifyUrl; Alipay: app key, notifyUrl;
 * Stripe: secretKey). The {@code ordergate} kind has no gateway to call.
 */
public final class GatewayClients {

  private GatewayClients() {
  }

  /** Null when the channel cannot open payments; {@link #whyNot} says why. */
  public static GatewayClient of(ChannelConfig config, Outbound outbound, Clock clock) {
    try {
      return switch (config.kind()) {
        case WECHATPAY_V3 -> new WechatPayClient(config, outbound, clock);
        case ALIPAY -> new AlipayClient(config, outbound, clock);
        case STRIPE -> new StripeClient(config, outbound, clock);
        case ORDERGATE -> null;
      };
    } catch (IllegalArgumentException missingKeys) {
      return null;
    }
  }

  /**
   * Whether the channel's refunds go to its gateway's refund API: a gateway kind with its outbound keys (the
   * clients' constructors check only the keys, so none is built for real here). The ordergate kind never.
   */
  public static boolean refundsAtGateway(ChannelConfig config) {
    return config.kind() != ChannelKind.ORDERGATE && of(config, null, Clock.systemUTC()) != null;
  }

  public static String whyNot(ChannelConfig config) {
    return switch (config.kind()) {
      case ORDERGATE -> "channel " + config.name() + " is of kind ordergate: it has no gateway to open payments at";
      case WECHATPAY_V3 -> "channel " + config.name() + " needs merchantPrivateKeyPem, merchantSerialNo and notifyUrl to open payments";
      case ALIPAY -> "channel " + config.name() + " needs appPrivateKeyPem and notifyUrl to open payments";
      case STRIPE -> "channel " + config.name() + " needs secretKey to open payments";
    };
  }

  public static Map<String, GatewayClient> all(Map<String, ChannelConfig> configs, Outbound outbound, Clock clock) {
    Map<String, GatewayClient> out = new LinkedHashMap<>();
    configs.forEach((name, c) -> {
      GatewayClient client = of(c, outbound, clock);
      if (client != null) {
        out.put(name, client);
      }
    });
    return Map.copyOf(out);
  }
}
