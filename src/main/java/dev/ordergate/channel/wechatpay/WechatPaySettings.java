package dev.ordergate.channel.wechatpay;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.ChannelSettings;
import dev.ordergate.channel.Pem;
import dev.ordergate.config.ConfigException;
import dev.ordergate.config.ConfigReader;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code kind: "wechatpay-v3"}. Inbound needs {@code mchId}, {@code appId}, {@code apiV3Key} (32
 * bytes) and {@code platformKeys} (each {@code {"id", "publicKeyPem"}}: a {@code PUB_KEY_ID_...}
 * public key or a platform certificate serial; several at once for rotation and for the
 * certificate-to-public-key migration). {@code merchantSerialNo}, {@code merchantPrivateKeyPem},
 * {@code baseUrl} and {@code notifyUrl} serve the outbound calls; they are validated when present.
 */
public record WechatPaySettings(String mchId, String appId, byte[] apiV3Key, String merchantSerialNo,
                                PrivateKey merchantPrivateKey, Map<String, PublicKey> platformKeys, String baseUrl,
                                String notifyUrl, boolean usesDevelopmentKeys) implements ChannelSettings {

  public static WechatPaySettings from(ConfigReader r, String prefix) {
    String apiV3Key = r.required(prefix + "apiV3Key");
    if (apiV3Key.getBytes(StandardCharsets.UTF_8).length != 32) {
      throw new ConfigException(prefix + "apiV3Key", "must be exactly 32 bytes (the APIv3 key set in the merchant platform)");
    }
    boolean dev = apiV3Key.contains("DEVONLY");
    Map<String, PublicKey> keys = new LinkedHashMap<>();
    var items = r.objects(prefix + "platformKeys");
    if (items.isEmpty()) {
      throw new ConfigException(prefix + "platformKeys", "needs at least one {\"id\", \"publicKeyPem\"}");
    }
    for (int i = 0; i < items.size(); i++) {
      String at = prefix + "platformKeys[" + i + "].";
      JsonObject item = items.get(i);
      if (!(item.getValue("id") instanceof String id) || id.isBlank()) {
        throw new ConfigException(at + "id", "is required (PUB_KEY_ID_... or the certificate serial)");
      }
      if (!(item.getValue("publicKeyPem") instanceof String pem) || pem.isBlank()) {
        throw new ConfigException(at + "publicKeyPem", "is required");
      }
      if (keys.put(id, Pem.publicKey(pem, at + "publicKeyPem")) != null) {
        throw new ConfigException(at + "id", "appears twice");
      }
      dev |= Pem.isDevelopmentOnly(pem, at + "publicKeyPem");
    }
    String privatePem = r.string(prefix + "merchantPrivateKeyPem", null);
    PrivateKey merchantKey = privatePem == null ? null : Pem.privateKey(privatePem, prefix + "merchantPrivateKeyPem");
    dev |= privatePem != null && Pem.isDevelopmentOnly(privatePem, prefix + "merchantPrivateKeyPem");
    String baseUrl = r.url(prefix + "baseUrl");
    return new WechatPaySettings(r.required(prefix + "mchId"), r.required(prefix + "appId"),
        apiV3Key.getBytes(StandardCharsets.UTF_8), r.string(prefix + "merchantSerialNo", null), merchantKey,
        Map.copyOf(keys), baseUrl == null ? "https://api.mch.weixin.qq.com" : baseUrl, r.url(prefix + "notifyUrl"), dev);
  }

  @Override
  public ChannelKind kind() {
    return ChannelKind.WECHATPAY_V3;
  }
}
