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
  void inFlightIsTenBatchesWhenASinkTakesBatchesAndTheLingerHasADefault() {
    OutboxConfig single = with(new JsonObject().put("batchSize", 50).put("sinks", new JsonObject()
        .put("ORDER_PAID", new JsonObject().put("url", "http://warehouse.local/hook")))).outbox();
    assertEquals(50, single.maxInFlight(), "one event per POST: the HTTP pool would only queue more");
    assertEquals(OutboxConfig.DEFAULT_LINGER_MS, single.lingerMs());
    OutboxConfig batching = with(new JsonObject().put("batchSize", 50).put("sinks", new JsonObject()
        .put("ORDER_PAID", new JsonObject().put("url", "http://warehouse.local/hook").put("batchMax", 100)))).outbox();
    assertEquals(500, batching.maxInFlight());
    OutboxConfig set = with(new JsonObject().put("maxInFlight", 7).put("lingerMs", 0)).outbox();
    assertEquals(7, set.maxInFlight());
    assertEquals(0, set.lingerMs());
    assertTrue(failure(new JsonObject().put("maxInFlight", 0)).contains("outbox.maxInFlight"));
    assertTrue(failure(new JsonObject().put("lingerMs", 5_000)).contains("outbox.lingerMs"));
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
