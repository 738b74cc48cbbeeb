package dev.ordergate.config;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.wechatpay.WechatPaySettings;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChannelConfigTest {

  private static JsonObject channels(JsonObject config) {
    return config.getJsonObject("payments").getJsonObject("channels");
  }

  private static String refused(JsonObject config) {
    return assertThrows(ConfigException.class, () -> AppConfig.from(config)).getMessage();
  }

  @Test
  void theShippedConfigHasOneSandboxChannelPerKindAllDevOnly() throws Exception {
    AppConfig c = AppConfig.from(new JsonObject(Files.readString(Path.of("conf/config.json"))));
    assertEquals(ChannelKind.ORDERGATE, c.channels().get("sandbox").kind());
    assertEquals(ChannelKind.WECHATPAY_V3, c.channels().get(Sandbox.WECHATPAY).kind());
    assertEquals(ChannelKind.ALIPAY, c.channels().get(Sandbox.ALIPAY).kind());
    assertEquals(ChannelKind.STRIPE, c.channels().get(Sandbox.STRIPE).kind());
    assertTrue(c.channels().values().stream().allMatch(ChannelConfig::devOnly));
    assertEquals("CNY", c.ordersCurrency());
    assertEquals(1, ((WechatPaySettings) c.channels().get(Sandbox.WECHATPAY).settings()).platformKeys().size());
  }

  @Test
  void aChannelUsingSandboxKeysMustSayDevOnly() {
    JsonObject config = Sandbox.config();
    channels(config).getJsonObject(Sandbox.ALIPAY).remove("devOnly");
    assertTrue(refused(config).contains("payments.channels.sandbox-alipay.devOnly"));
  }

  @Test
  void missingOrBadKeysStopStartupNamingThem() {
    record Case(String channel, String key, Object value, String named) {}
    for (Case k : new Case[] {
        new Case(Sandbox.WECHATPAY, "apiV3Key", null, "sandbox-wechatpay.apiV3Key"),
        new Case(Sandbox.WECHATPAY, "apiV3Key", "short", "sandbox-wechatpay.apiV3Key"),
        new Case(Sandbox.WECHATPAY, "mchId", null, "sandbox-wechatpay.mchId"),
        new Case(Sandbox.WECHATPAY, "platformKeys", new JsonArray(), "sandbox-wechatpay.platformKeys"),
        new Case(Sandbox.WECHATPAY, "platformKeys", new JsonArray().add(new JsonObject().put("id", "X").put("publicKeyPem", "nope.pem")),
            "sandbox-wechatpay.platformKeys[0].publicKeyPem"),
        new Case(Sandbox.WECHATPAY, "merchantPrivateKeyPem", Sandbox.publicKeyPath("alipay"), "sandbox-wechatpay.merchantPrivateKeyPem"),
        new Case(Sandbox.ALIPAY, "appId", null, "sandbox-alipay.appId"),
        new Case(Sandbox.ALIPAY, "alipayPublicKeysPem", new JsonArray(), "sandbox-alipay.alipayPublicKeysPem"),
        new Case(Sandbox.ALIPAY, "gatewayUrl", "ftp://x", "sandbox-alipay.gatewayUrl"),
        new Case(Sandbox.STRIPE, "webhookSecrets", new JsonArray().add("not-a-whsec"), "sandbox-stripe.webhookSecrets[0]"),
        new Case(Sandbox.STRIPE, "kind", "paypal", "sandbox-stripe.kind"),
        new Case(Sandbox.STRIPE, "currency", "yuan", "sandbox-stripe.currency")}) {
      JsonObject config = Sandbox.config();
      if (k.value() == null) {
        channels(config).getJsonObject(k.channel()).remove(k.key());
      } else {
        channels(config).getJsonObject(k.channel()).put(k.key(), k.value());
      }
      String message = refused(config);
      assertTrue(message.contains("payments.channels." + k.named()), k + " -> " + message);
    }
  }

  @Test
  void aSecretSharedByTwoChannelsIsRefusedNamingBothKeysButNotTheSecret() {
    JsonObject config = TestApp.baseConfig();
    channels(config).put("second", new JsonObject().put("secrets", new JsonArray().add(TestApp.SECRET)));
    String message = refused(config);
    assertTrue(message.contains("payments.channels.second.secrets[0]"), message);
    assertTrue(message.contains("payments.channels.sandbox.secrets[1]"), message);
    assertFalse(message.contains(TestApp.SECRET), "never echo a secret: " + message);
  }

  @Test
  void legacyV1UntilMustBeAnInstant() {
    JsonObject config = TestApp.baseConfig();
    channels(config).getJsonObject("sandbox").put("legacyV1Until", "next week");
    assertTrue(refused(config).contains("payments.channels.sandbox.legacyV1Until"));
  }

  @Test
  void ordersCurrencyIsValidated() {
    JsonObject config = TestApp.baseConfig().put("orders", new JsonObject().put("currency", "rmb"));
    assertTrue(refused(config).contains("orders.currency"));
  }
}
