package dev.ordergate.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A rejected secret, token or credential-bearing URL is never echoed: the error names the key. */
class SecretsTest {

  private static final String SECRET = "Zq8-leaked-if-you-see-this";

  private static JsonObject config(String token, Object secrets, Object refundUrl) {
    JsonObject channel = new JsonObject().put("secrets", secrets);
    if (refundUrl != null) {
      channel.put("refundUrl", refundUrl);
    }
    return new JsonObject()
        .put("admin", new JsonObject().put("token", token))
        .put("payments", new JsonObject().put("channels", new JsonObject().put("bank", channel)));
  }

  private static ConfigException rejected(JsonObject config, String key) {
    ConfigException e = assertThrows(ConfigException.class, () -> AppConfig.from(config));
    assertTrue(e.getMessage().contains(key), e.getMessage());
    return e;
  }

  private static void assertNotEchoed(ConfigException e, String secret) {
    assertFalse(e.getMessage().contains(secret), "the error echoes the secret: " + e.getMessage());
    assertFalse(e.getMessage().contains(secret.substring(0, 8)), "the error echoes part of it: " + e.getMessage());
  }

  @Test
  void aRejectedChannelSecretIsNotEchoed() {
    var e = rejected(config("a-strong-token-" + "9f3b2c7d1e", new JsonArray().add(SECRET).add(""), null),
        "payments.channels.bank.secrets");
    assertNotEchoed(e, SECRET);
    var notAList = rejected(config("a-strong-token-9f3b2c7d1e", SECRET, null), "payments.channels.bank.secrets");
    assertNotEchoed(notAList, SECRET);
  }

  @Test
  void aRejectedAdminTokenIsNotEchoed() {
    assertNotEchoed(rejected(config("Zq8-short", new JsonArray().add("s"), null), "admin.token"), "Zq8-short");
    var fromEnv = assertThrows(ConfigException.class, () -> AppConfig.from(
        config(null, new JsonArray().add("s"), null).put("ORDERGATE_ADMIN_TOKEN", "aaaaaaaaaaaaaaaaaaaa")));
    assertTrue(fromEnv.getMessage().contains("ORDERGATE_ADMIN_TOKEN"), fromEnv.getMessage());
    assertNotEchoed(fromEnv, "aaaaaaaaaaaaaaaaaaaa");
    var wrongType = rejected(config(null, new JsonArray().add("s"), null)
        .put("admin", new JsonObject().put("token", new JsonObject().put("v", SECRET))), "admin.token");
    assertNotEchoed(wrongType, SECRET);
  }

  @Test
  void aRejectedUrlLosesItsCredentials() {
    var e = rejected(config("a-strong-token-9f3b2c7d1e", new JsonArray().add("s"), "ftp://shop:" + SECRET + "@bank.example/refund"),
        "payments.channels.bank.refundUrl");
    assertNotEchoed(e, SECRET);
    assertTrue(e.getMessage().contains("ftp://***@bank.example/refund"), e.getMessage());
    var sink = assertThrows(ConfigException.class, () -> AppConfig.from(config("a-strong-token-9f3b2c7d1e",
        new JsonArray().add("s"), null).put("outbox", new JsonObject().put("sinks", new JsonObject()
        .put("ORDER_PAID", new JsonObject().put("url", "mailto://u:" + SECRET + "@x"))))));
    assertNotEchoed(sink, SECRET);
    var db = assertThrows(ConfigException.class, () -> AppConfig.from(config("a-strong-token-9f3b2c7d1e",
        new JsonArray().add("s"), null).put("ORDERGATE_DB_URL", "mysql://root:" + SECRET + "@db/x")));
    assertNotEchoed(db, SECRET);
  }

  @Test
  void redactionCutsEveryUserInfo() {
    assertEquals("HTTP 500 from https://***@pay.example/r and http://***@h:1/x?a=b@c",
        Secrets.redactUrls("HTTP 500 from https://u:p@pay.example/r and http://tok@h:1/x?a=b@c"));
    assertEquals("no url here", Secrets.redactUrls("no url here"));
  }

  @Test
  void aTokenWithoutEntropyIsRefused() {
    for (String weak : new String[] {"aaaaaaaaaaaaaaaa", "abababababababab", "aaaaaaaabbbbbbbb", "password12345678",
        "0000000000000000000000000000000000000000"}) {
      var e = rejected(config(weak, new JsonArray().add("s"), null), "admin.token");
      assertTrue(e.getMessage().contains("predictable"), e.getMessage());
    }
    assertDoesNotThrow(() -> AppConfig.from(config("3f9c1a7e5b2d8046c1e9", new JsonArray().add("s"), null)));
    assertEquals(0, Secrets.entropyBits("aaaaaaaaaaaaaaaa"), 1e-9);
    assertEquals(96, Secrets.entropyBits("0123456789abcdef0123456789abcdef0123456789abcdef") / 2, 1e-9);
  }
}
