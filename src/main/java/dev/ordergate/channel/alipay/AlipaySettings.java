package dev.ordergate.channel.alipay;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.ChannelSettings;
import dev.ordergate.channel.Pem;
import dev.ordergate.config.ConfigException;
import dev.ordergate.config.ConfigReader;

import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code kind: "alipay"}: {@code appId} and {@code alipayPublicKeysPem} (a list: any verifies, for
 * rotation) for inbound; {@code appPrivateKeyPem} (PKCS#8), {@code gatewayUrl} and {@code notifyUrl}
 * for the outbound calls, validated when present.
 */
public record AlipaySettings(String appId, PrivateKey appPrivateKey, List<PublicKey> alipayPublicKeys,
                             String gatewayUrl, String notifyUrl, boolean usesDevelopmentKeys) implements ChannelSettings {

  public static AlipaySettings from(ConfigReader r, String prefix) {
    List<String> pems = r.strings(prefix + "alipayPublicKeysPem");
    if (pems.isEmpty()) {
      throw new ConfigException(prefix + "alipayPublicKeysPem", "needs at least one Alipay public key");
    }
    List<PublicKey> keys = new ArrayList<>();
    boolean dev = false;
    for (int i = 0; i < pems.size(); i++) {
      keys.add(Pem.publicKey(pems.get(i), prefix + "alipayPublicKeysPem[" + i + "]"));
      dev |= Pem.isDevelopmentOnly(pems.get(i), prefix + "alipayPublicKeysPem[" + i + "]");
    }
    String privatePem = r.string(prefix + "appPrivateKeyPem", null);
    PrivateKey appKey = privatePem == null ? null : Pem.privateKey(privatePem, prefix + "appPrivateKeyPem");
    dev |= privatePem != null && Pem.isDevelopmentOnly(privatePem, prefix + "appPrivateKeyPem");
    String gateway = r.url(prefix + "gatewayUrl");
    return new AlipaySettings(r.required(prefix + "appId"), appKey, List.copyOf(keys),
        gateway == null ? "https://openapi.alipay.com/gateway.do" : gateway, r.url(prefix + "notifyUrl"), dev);
  }

  @Override
  public ChannelKind kind() {
    return ChannelKind.ALIPAY;
  }
}
