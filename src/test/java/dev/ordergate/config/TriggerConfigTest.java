package dev.ordergate.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The trigger tiers' keys: off by default, and a bad value names its key. */
class TriggerConfigTest {

  private static ConfigReader reader(String json) {
    return new ConfigReader(new JsonObject(json));
  }

  @Test
  void bothOptionalTiersAreOffByDefault() {
    AppConfig c = AppConfig.from(new JsonObject());
    assertFalse(c.broker().enabled());
    assertFalse(c.reminders().enabled());
    assertFalse(c.reminders().redisEnabled());
    assertEquals(BrokerConfig.DEFAULT_TIERS, c.broker().tiersMs());
  }

  @Test
  void tiersAreSortedAndDeduplicated() {
    BrokerConfig b = BrokerConfig.from(reader("{\"triggers\":{\"broker\":{\"tiersMs\":[5000, 100, 5000, 1000]}}}"));
    assertEquals(List.of(100L, 1000L, 5000L), b.tiersMs());
  }

  @Test
  void badValuesNameTheirKey() {
    assertKey("triggers.broker.tiersMs", "{\"triggers\":{\"broker\":{\"tiersMs\":[]}}}");
    assertKey("triggers.broker.tiersMs", "{\"triggers\":{\"broker\":{\"tiersMs\":[5]}}}");
    assertKey("triggers.broker.uri", "{\"triggers\":{\"broker\":{\"uri\":\"http://x\"}}}");
    assertKey("triggers.broker.prefix", "{\"triggers\":{\"broker\":{\"prefix\":\"a b\"}}}");
    assertKey("triggers.broker.prefetch", "{\"triggers\":{\"broker\":{\"prefetch\":0}}}");
    assertKey("triggers.broker.confirmTimeoutMs",
        "{\"outbox\":{\"leaseMs\":5000,\"httpTimeoutMs\":1000},\"triggers\":{\"broker\":{\"enabled\":true,\"confirmTimeoutMs\":6000}}}");
    assertKey("reminders.beforeSeconds", "{\"reminders\":{\"beforeSeconds\":-1}}");
    assertKey("reminders.redis.url", "{\"reminders\":{\"redis\":{\"url\":\"localhost\"}}}");
    assertKey("reminders.redis.keyPrefix", "{\"reminders\":{\"redis\":{\"keyPrefix\":\"a*\"}}}");
  }

  @Test
  void theRedisDbIndexComesFromTheUrl() {
    RemindersConfig r = RemindersConfig.from(new ConfigReader(new JsonObject().put("reminders",
        new JsonObject().put("beforeSeconds", 300).put("redis", new JsonObject().put("url", "redis://h:6379/9")))));
    assertTrue(r.enabled());
    assertEquals(9, r.redisDb());
    assertEquals(0, RemindersConfig.from(reader("{}")).redisDb());
  }

  private static void assertKey(String key, String json) {
    ConfigException e = assertThrows(ConfigException.class, () -> AppConfig.from(new JsonObject(json)));
    assertTrue(e.getMessage().contains(key), e.getMessage());
  }
}
