package dev.ordergate.config;

import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The outbox keys: defaults, and a bad value stops startup naming its key. */
class OutboxConfigTest {

  private static AppConfig with(JsonObject outbox) {
    return AppConfig.from(TestApp.baseConfig().put("outbox", outbox));
  }

  private static String failure(JsonObject outbox) {
    return assertThrows(ConfigException.class, () -> with(outbox)).getMessage();
  }

  @Test
  void defaultsApplyWhenNothingIsSet() {
    OutboxConfig c = AppConfig.from(TestApp.baseConfig()).outbox();
    assertTrue(c.enabled());
    assertEquals(10, c.maxAttempts());
    assertEquals(1_000, c.baseDelayMs());
    assertEquals(60_000, c.leaseMs());
    assertTrue(c.sinkUrls().isEmpty());
  }

  @Test
  void sinksAreReadPerTypeAndCommentsIgnored() {
    OutboxConfig c = with(new JsonObject().put("sinks", new JsonObject()
        .put("_comment", "ignored")
        .put("ORDER_PAID", new JsonObject().put("url", "http://warehouse.local/hook")))).outbox();
    assertEquals("http://warehouse.local/hook", c.sinkUrls().get("ORDER_PAID"));
    assertEquals(1, c.sinkUrls().size());
    assertEquals(1, c.batchMax("ORDER_PAID"), "one event per POST unless batchMax says more");
    assertEquals(2, c.concurrency());
  }

  @Test
  void aSinkMayTakeBatches() {
    OutboxConfig c = with(new JsonObject().put("concurrency", 4).put("sinks", new JsonObject()
        .put("ORDER_PAID", new JsonObject().put("url", "http://warehouse.local/hook").put("batchMax", 100)))).outbox();
    assertEquals(100, c.batchMax("ORDER_PAID"));
    assertEquals(1, c.batchMax("NOTIFY_SMS"));
    assertEquals(4, c.concurrency());
    assertTrue(failure(new JsonObject().put("sinks", new JsonObject().put("ORDER_PAID",
        new JsonObject().put("url", "http://x").put("batchMax", 0)))).contains("outbox.sinks.ORDER_PAID.batchMax"));
    assertTrue(failure(new JsonObject().put("concurrency", 0)).contains("outbox.concurrency"));
  }

  @Test
  void badValuesNameTheirKey() {
    assertTrue(failure(new JsonObject().put("maxAttempts", 0)).contains("outbox.maxAttempts"));
    assertTrue(failure(new JsonObject().put("baseDelayMs", "soon")).contains("outbox.baseDelayMs"));
    assertTrue(failure(new JsonObject().put("leaseMs", 5_000).put("httpTimeoutMs", 5_000))
        .contains("outbox.httpTimeoutMs"));
    assertTrue(failure(new JsonObject().put("sinks", new JsonObject().put("REFUND_REQUESTED",
        new JsonObject().put("url", "http://x")))).contains("outbox.sinks.REFUND_REQUESTED"));
    assertTrue(failure(new JsonObject().put("sinks", new JsonObject().put("NOTIFY_SMS",
        new JsonObject().put("url", "ftp://x")))).contains("outbox.sinks.NOTIFY_SMS.url"));
  }
}
