package dev.ordergate.config;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AppConfigTest {

  private static JsonObject valid() {
    return new JsonObject()
        .put("http", new JsonObject().put("port", 8080))
        .put("admin", new JsonObject().put("token", "0123456789abcdef0"))
        .put("payments", new JsonObject().put("channels", new JsonObject()
            .put("sandbox", new JsonObject().put("secrets", new JsonArray().add("s1")))));
  }

  @Test
  void defaultsApply() {
    AppConfig c = AppConfig.from(valid());
    assertEquals(1800, c.paymentTimeoutSeconds());
    assertEquals(300, c.channels().get("sandbox").toleranceSeconds());
    assertEquals(10_000, c.autoRefundMaxCents());
    assertNull(c.dbUrl());
  }

  @Test
  void environmentOverridesWinOverTheFile() {
    AppConfig c = AppConfig.from(valid()
        .put("db", new JsonObject().put("url", "postgresql://file@h:5432/db"))
        .put("ORDERGATE_HTTP_PORT", "9999")
        .put("ORDERGATE_DB_URL", "postgresql://env@h:5432/db")
        .put("ORDERGATE_ADMIN_TOKEN", "from-the-environment-0001")
        .put("ORDERGATE_API_KEYS", "env-api-key-0123456789abc, env-api-key-second-98765"));
    assertEquals(9999, c.httpPort());
    assertEquals(java.util.List.of("env-api-key-0123456789abc", "env-api-key-second-98765"), c.apiKeys());
    assertEquals("postgresql://env@h:5432/db", c.dbUrl());
    assertEquals("from-the-environment-0001", c.adminToken());
  }

  @Test
  void aBadValueNamesItsKey() {
    var port = assertThrows(ConfigException.class, () -> AppConfig.from(valid().put("http", new JsonObject().put("port", 70000))));
    assertTrue(port.getMessage().contains("http.port"), port.getMessage());
    var timeout = assertThrows(ConfigException.class, () -> AppConfig.from(valid()
        .put("orders", new JsonObject().put("paymentTimeoutSeconds", "soon"))));
    assertTrue(timeout.getMessage().contains("orders.paymentTimeoutSeconds"), timeout.getMessage());
    JsonObject noSecrets = valid();
    noSecrets.getJsonObject("payments").getJsonObject("channels").put("bank", new JsonObject());
    var secrets = assertThrows(ConfigException.class, () -> AppConfig.from(noSecrets));
    assertTrue(secrets.getMessage().contains("payments.channels.bank.secrets"), secrets.getMessage());
    var url = assertThrows(ConfigException.class, () -> AppConfig.from(valid().put("ORDERGATE_DB_URL", "mysql://x")));
    assertTrue(url.getMessage().contains("ORDERGATE_DB_URL"), url.getMessage());
  }

  @Test
  void aMissingAdminTokenIsGenerated() {
    JsonObject json = valid();
    json.remove("admin");
    AppConfig c = AppConfig.from(json);
    assertTrue(c.adminTokenGenerated());
    assertEquals(48, c.adminToken().length());
  }

  @Test
  void theShippedConfigFileIsValid(@TempDir Path dir) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      JsonObject json = ConfigLoader.retriever(vertx, "conf/config.json", 0).getConfig().await();
      AppConfig c = AppConfig.from(json);
      assertTrue(c.channels().containsKey("sandbox"));
      Path bad = dir.resolve("bad.json");
      Files.writeString(bad, valid().put("db", new JsonObject().put("poolSize", 0)).encode());
      JsonObject badJson = ConfigLoader.retriever(vertx, bad.toString(), 0).getConfig().await();
      var e = assertThrows(ConfigException.class, () -> AppConfig.from(badJson));
      assertTrue(e.getMessage().contains("db.poolSize"), e.getMessage());
    } finally {
      vertx.close().await();
    }
  }

  private static JsonObject production() {
    return valid().put("mode", "production")
        .put("api", new JsonObject().put("keys", new JsonArray().add("prod-api-key-0123456789abcdef")));
  }

  /** Issue 14, defect 7: development-only channels and keys exist only in dev mode. */
  @Test
  void developmentOnlyChannelsAreRefusedOutsideDevModeNamingTheChannel() {
    JsonObject devOnly = production();
    devOnly.getJsonObject("payments").getJsonObject("channels").getJsonObject("sandbox").put("devOnly", true);
    var e = assertThrows(ConfigException.class, () -> AppConfig.from(devOnly));
    assertTrue(e.getMessage().contains("payments.channels.sandbox"), e.getMessage());

    JsonObject published = production();
    published.getJsonObject("payments").getJsonObject("channels").getJsonObject("sandbox")
        .put("secrets", new JsonArray().add("sandbox-secret-DEVELOPMENT-ONLY"));
    var p = assertThrows(ConfigException.class, () -> AppConfig.from(published));
    assertTrue(p.getMessage().contains("payments.channels.sandbox"), p.getMessage());
    assertTrue(!p.getMessage().contains("sandbox-secret-DEVELOPMENT-ONLY"), "a secret is never echoed");

    // The same channel in dev mode (explicit, or the embedded-database default) is accepted.
    AppConfig dev = AppConfig.from(devOnly.copy().put("mode", "dev"));
    assertTrue(dev.devMode() && dev.channels().get("sandbox").devOnly());
    JsonObject embedded = devOnly.copy();
    embedded.remove("mode");
    assertTrue(AppConfig.from(embedded).devMode());
  }

  @Test
  void theShippedConfigIsRefusedWithADatabaseUrlUnlessDevModeIsSet() {
    Vertx vertx = Vertx.vertx();
    try {
      JsonObject shipped = ConfigLoader.retriever(vertx, "conf/config.json", 0).getConfig().await();
      JsonObject withDb = shipped.copy().put("ORDERGATE_DB_URL", "postgresql://u@db:5432/shop");
      var e = assertThrows(ConfigException.class, () -> AppConfig.from(withDb));
      assertTrue(e.getMessage().contains("DEVELOPMENT") || e.getMessage().contains("development"), e.getMessage());
      JsonObject keyed = withDb.copy().put("ORDERGATE_API_KEYS", "prod-api-key-0123456789abcdef");
      var c = assertThrows(ConfigException.class, () -> AppConfig.from(keyed));
      assertTrue(c.getMessage().contains("payments.channels.sandbox"), c.getMessage());
      assertTrue(AppConfig.from(withDb.copy().put("ORDERGATE_MODE", "dev")).devMode());
    } finally {
      vertx.close().await();
    }
  }

  @Test
  void apiKeysAreNeededOutsideDevModeAndMustLookLikeSecrets() {
    JsonObject none = production();
    none.remove("api");
    var e = assertThrows(ConfigException.class, () -> AppConfig.from(none));
    assertTrue(e.getMessage().contains("api.keys"), e.getMessage());
    var weak = assertThrows(ConfigException.class, () -> AppConfig.from(production()
        .put("api", new JsonObject().put("keys", new JsonArray().add("aaaaaaaaaaaaaaaaaaaa")))));
    assertTrue(weak.getMessage().contains("api.keys[0]") && !weak.getMessage().contains("aaaaaaaa"), weak.getMessage());
    JsonObject dev = valid();
    AppConfig generated = AppConfig.from(dev);
    assertTrue(generated.apiKeyGenerated() && generated.apiKeys().get(0).length() >= 32);
  }

  @Test
  void callbackSlotsMustLeaveConnectionsForTheRest() {
    var e = assertThrows(ConfigException.class, () -> AppConfig.from(valid()
        .put("db", new JsonObject().put("poolSize", 4)).put("callbacks", new JsonObject().put("maxInFlight", 4))));
    assertTrue(e.getMessage().contains("callbacks.maxInFlight") && e.getMessage().contains("db.poolSize"), e.getMessage());
    assertEquals(3, AppConfig.from(valid().put("db", new JsonObject().put("poolSize", 4))
        .put("callbacks", new JsonObject().put("maxInFlight", 3))).callbacks().maxInFlight());
    assertEquals(CallbacksConfig.DEFAULT_MAX_IN_FLIGHT, AppConfig.from(valid()).callbacks().maxInFlight());
    assertEquals(1, AppConfig.from(valid().put("db", new JsonObject().put("poolSize", 3))).callbacks().maxInFlight());
  }
}
