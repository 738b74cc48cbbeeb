package dev.ordergate.channel.stripe;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.ChannelSettings;
import dev.ordergate.config.ConfigException;
import dev.ordergate.config.ConfigReader;

import java.util.List;

/**
 * {@code kind: "stripe"}: {@code webhookSecrets} (a list of {@code whsec_...}: any verifies, for
 * rotation) for inbound; {@code secretKey} ({@code sk_...} or {@code rk_...}) and {@code baseUrl}
 * for the outbound calls, validated when present. {@code checkoutSuccessUrl}: where Stripe's hosted
 * Checkout page sends the customer back; when set, an order whose remaining window fits a Checkout
 * Session's {@code expires_at} (30 min to 24 h) is opened as a Session, else as a PaymentIntent.
 */
public record StripeSettings(List<String> webhookSecrets, String secretKey, String baseUrl, boolean usesDevelopmentKeys,
                             String checkoutSuccessUrl)
    implements ChannelSettings {

  public static StripeSettings from(ConfigReader r, String prefix) {
    List<String> secrets = r.strings(prefix + "webhookSecrets");
    if (secrets.isEmpty()) {
      throw new ConfigException(prefix + "webhookSecrets", "needs at least one whsec_ secret");
    }
    for (int i = 0; i < secrets.size(); i++) {
      if (!secrets.get(i).startsWith("whsec_") || secrets.get(i).length() < 16) {
        throw new ConfigException(prefix + "webhookSecrets[" + i + "]", "must be an endpoint signing secret (whsec_...)");
      }
    }
    String secretKey = r.string(prefix + "secretKey", null);
    if (secretKey != null && !secretKey.matches("(sk|rk)_[A-Za-z0-9_]+")) {
      throw new ConfigException(prefix + "secretKey", "must be a Stripe secret key (sk_... or rk_...)");
    }
    String baseUrl = r.url(prefix + "baseUrl");
    return new StripeSettings(secrets, secretKey, baseUrl == null ? "https://api.stripe.com" : baseUrl,
        secrets.stream().anyMatch(s -> s.contains("DEVELOPMENT_ONLY")), r.url(prefix + "checkoutSuccessUrl"));
  }

  @Override
  public ChannelKind kind() {
    return ChannelKind.STRIPE;
  }
}
