package dev.ordergate.outbox;

import dev.ordergate.support.TestApp;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 14, defect 2: a sink that answers 200 and then drips one body byte every 0.5 s (about 10 s)
 * must not be delivered to forever. With leaseMs 3000 and httpTimeoutMs 2000 each delivery is cut at
 * its deadline: at most maxAttempts deliveries per event, never two at once, then DEAD (a dead refund
 * fails its exception), and the order's later events flow.
 */
class SlowSinkTest {

  private static final int MAX_ATTEMPTS = 3;
  private static final Vertx sinkVertx = Vertx.vertx();
  private static final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
  private static final Map<String, AtomicInteger> open = new ConcurrentHashMap<>();
  private static final AtomicInteger maxOverlap = new AtomicInteger();
  private static HttpServer sink;
  private static TestApp app;

  @BeforeAll
  static void start() {
    sink = sinkVertx.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> {
      String key = String.valueOf(req.getHeader("Idempotency-Key"));
      deliveries.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      int now = open.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      maxOverlap.accumulateAndGet(now, Math::max);
      var resp = req.response().setChunked(true).setStatusCode(200);
      AtomicInteger sent = new AtomicInteger();
      long[] timer = new long[1];
      Runnable finish = () -> {
        if (sinkVertx.cancelTimer(timer[0]) || sent.get() >= 20) {
          open.get(key).decrementAndGet();
        }
      };
      resp.closeHandler(v -> finish.run());
      timer[0] = sinkVertx.setPeriodic(500, id -> {
        if (sent.incrementAndGet() >= 20) {
          sinkVertx.cancelTimer(id);
          open.get(key).decrementAndGet();
          resp.end(".");
        } else {
          resp.write(".");
        }
      });
    })).listen(0, "127.0.0.1").await();
    String url = "http://127.0.0.1:" + sink.actualPort();
    JsonObject config = TestApp.baseConfig();
    JsonObject payments = config.getJsonObject("payments");
    payments.put("autoRefundMaxCents", 1_000_000);
    payments.getJsonObject("channels").getJsonObject(TestApp.CHANNEL).put("refundUrl", url + "/refund");
    config.put("outbox", new JsonObject().put("pollMs", 100).put("baseDelayMs", 50).put("maxDelayMs", 100)
        .put("maxAttempts", MAX_ATTEMPTS).put("leaseMs", 3000).put("httpTimeoutMs", 2000)
        .put("sinks", new JsonObject().put("ORDER_PAID", new JsonObject().put("url", url + "/paid"))));
    app = TestApp.start(config);
  }

  @AfterAll
  static void stop() {
    app.close();
    sinkVertx.close().await();
  }

  @Test
  void aDrippingSinkGetsAtMostMaxAttemptsNeverTwoAtOnceThenDead() {
    app.setStock("A", 10);
    long paid = app.createOrder(order("P1", "u1", null, "A", 1, 500)).getLong("amountCents");
    app.callback(payment("T-P1", "P1", paid));
    long late = app.createOrder(order("L1", "u1", null, "A", 1, 700)).getLong("amountCents");
    expect(app.call(HttpMethod.POST, "/api/orders/L1/cancel", null, false), 200);
    assertEquals("LATE_AFTER_CANCEL", app.callback(payment("T-L1", "L1", late)).getString("outcome"));

    eventually("the stuck ORDER_PAID and refund request are DEAD", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE status = 'DEAD' AND type IN ('ORDER_PAID', 'REFUND_REQUESTED')") == 2);
    // The order's next event (NOTIFY_SMS, to the log sink) flows once the stuck one is dead.
    eventually("P1's NOTIFY_SMS is delivered", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE order_no = 'P1' AND type = 'NOTIFY_SMS' AND status = 'DELIVERED'") == 1);
    assertEquals(0, app.count("SELECT count(*) FROM outbox_events_shown WHERE attempts > $1", MAX_ATTEMPTS));
    assertEquals("REFUND_FAILED", app.rows("SELECT status FROM exception_orders WHERE order_no = 'L1'").get(0).getString(0));
    for (var e : deliveries.entrySet()) {
      assertTrue(e.getValue().get() <= MAX_ATTEMPTS, e.getKey() + " was delivered " + e.getValue() + " times");
    }
    assertEquals(2, deliveries.size(), "both stuck events reached the sink");
    assertEquals(1, maxOverlap.get(), "no two deliveries of one event overlapped");
  }
}
