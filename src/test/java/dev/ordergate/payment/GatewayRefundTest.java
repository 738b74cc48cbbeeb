package dev.ordergate.payment;

import dev.ordergate.sim.TradeBook;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import dev.ordergate.sweep.SweepFixtures;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Refunds through the gateways (issue 10), end to end against the gateway simulator on a real PostgreSQL:
 * a late payment on a gateway channel opens an exception whose refund the outbox asks of that gateway's own
 * refund API (WeChat Pay v3, Alipay, Stripe wire formats, real per-trade refund state), the answer and the
 * refund notification drive REFUNDED / REFUND_FAILED, and the refund query settles what was left pending.
 */
class GatewayRefundTest {

  private static final long THRESHOLD = 1_000;
  private static final long CENTS = 500;
  private static GatewaySim sim;
  private static JsonObject config;
  private static TestApp app;

  @BeforeAll
  static void start() {
    sim = new GatewaySim();
    config = sim.serviceConfig(new JsonObject().put("autoRefundMaxCents", THRESHOLD).put("gatewayTimeoutMs", 700)
        .put("refundQuerySeconds", 2));
    config.put("outbox", new JsonObject().put("pollMs", 100).put("baseDelayMs", 20).put("maxDelayMs", 200)
        .put("maxAttempts", 10).put("leaseMs", 3_000).put("httpTimeoutMs", 1_000));
    app = TestApp.start(config);
  }

  @AfterAll
  static void stop() {
    app.close();
    sim.close();
  }

  @BeforeEach
  void fresh() {
    sim.clearFaults();
    app.truncate();
    app.setStock("A", 1000);
    for (String kind : new String[] {"wechatpay-v3", "alipay", "stripe"}) {
      sim.apis.trades().refundOutcome(kind, TradeBook.RefundState.SUCCEEDED);
      notifyApp(kind);
    }
  }

  @AfterEach
  void clear() {
    sim.clearFaults();
  }

  private static void notifyApp(String kind) {
    sim.apis.notifier().webhook(kind, "http://127.0.0.1:" + app.verticle.port() + "/api/callbacks/" + channel(kind));
  }

  private static String channel(String kind) {
    return switch (kind) {
      case "wechatpay-v3" -> Sandbox.WECHATPAY;
      case "alipay" -> Sandbox.ALIPAY;
      default -> Sandbox.STRIPE;
    };
  }

  /** A late payment at the gateway: the order is cancelled here, then its trade is paid there. Answers the trade ref. */
  private static String latePayment(String kind, String orderNo) {
    app.createOrder(order(orderNo, "u1", null, "A", 1, CENTS));
    expect(app.call(HttpMethod.POST, "/api/orders/" + orderNo + "/cancel", null, false), 200);
    String ref = kind.equals("stripe") ? "pi_sim" + UUID.randomUUID().toString().replace("-", "").substring(0, 14) : orderNo;
    sim.apis.trades().create(kind, ref, orderNo, CENTS, "CNY", null, null, "client", TradeBook.State.OPEN);
    JsonObject paid = sim.pay(app, kind, ref, channel(kind), true);
    assertEquals(200, paid.getInteger("httpStatus"), paid.encode());
    return ref;
  }

  private static Row exception(String orderNo) {
    List<Row> rows = app.rows("SELECT id, status, txn_id FROM exception_orders WHERE order_no = $1", orderNo);
    assertEquals(1, rows.size(), "one exception for " + orderNo);
    return rows.get(0);
  }

  private static String status(String orderNo) {
    return exception(orderNo).getString("status");
  }

  private static Row refundEvent(String orderNo) {
    return app.rows("SELECT id, status, attempts FROM outbox_events_shown WHERE type = 'REFUND_REQUESTED' AND order_no = $1",
        orderNo).get(0);
  }

  private static List<String> history(String orderNo) {
    return app.rows("SELECT h.event FROM exception_history h JOIN exception_orders x ON x.id = h.exception_id"
        + " WHERE x.order_no = $1 ORDER BY h.id", orderNo).stream().map(r -> r.getString(0)).toList();
  }

  /** The detail of the exception's history row {@code event}. */
  private static String detail(String orderNo, String event) {
    return app.rows("SELECT h.detail FROM exception_history h JOIN exception_orders x ON x.id = h.exception_id"
        + " WHERE x.order_no = $1 AND h.event = $2", orderNo, event).get(0).getString(0);
  }

  private static long orderSideRows(String orderNo) {
    return app.count("SELECT (SELECT count(*) FROM order_transitions WHERE order_no = $1)"
        + " + (SELECT count(*) FROM payment_receipts WHERE order_no = $1)"
        + " + (SELECT count(*) FROM payment_notifications n JOIN payment_receipts r ON r.txn_id = n.txn_id"
        + "    WHERE r.order_no = $1)", orderNo);
  }

  private static void eventually(String what, BooleanSupplier condition) {
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(30), condition), "timed out waiting until " + what);
  }

  /** Stops the service without dropping its database and starts a new one on it (a restart). */
  private static void restart() {
    app.http.close();
    app.pool.close().await();
    app.vertx.close().await();
    app = TestApp.start(config, app.db);
  }

  @ParameterizedTest
  @ValueSource(strings = {"wechatpay-v3", "alipay", "stripe"})
  void aLatePaymentIsRefundedAtItsGatewayExactlyOnceAcrossThreeDeliveriesAndARestart(String kind) {
    String no = "RF" + kind.charAt(0) + UUID.randomUUID().toString().substring(0, 6);
    // The gateway makes the refund, but its answers come after our timeout (700 ms): each delivery fails and
    // the outbox retries with the same refund id. Its notification is lost (no service listens there).
    sim.apis.notifier().webhook(kind, "http://127.0.0.1:1/gone");
    sim.fault(kind, new JsonObject().put("latencyMs", 1_200).put("ops", new JsonArray().add("refund")));
    String ref = latePayment(kind, no);
    assertEquals("REFUND_PENDING", status(no));
    eventually("two deliveries were tried and the gateway refunded", () -> refundEvent(no).getInteger("attempts") >= 2
        && sim.apis.trades().refundCount(kind, ref) == 1);
    restart();
    int callsBefore = sim.stats(kind).getInteger("calls");
    sim.clearFaults();
    eventually("the refund is settled after the restart", () -> !status(no).equals("REFUND_PENDING"));
    // A new refund id per delivery would have the gateway refuse the second refund (the trade is refunded in
    // full already) and end REFUND_FAILED; the same id gets the first refund's answer again.
    assertEquals("REFUNDED", status(no), "history " + history(no) + ", refunds at the gateway "
        + sim.apis.trades().refundCount(kind, ref));

    eventually("the request is delivered", () -> "DELIVERED".equals(refundEvent(no).getString("status")));
    Row event = refundEvent(no);
    assertTrue(event.getInteger("attempts") >= 3, "three deliveries at least: " + event.getInteger("attempts"));
    int calls = callsBefore + sim.stats(kind).getInteger("calls");
    assertTrue(calls >= 3, "each delivery reached the gateway: " + calls + " refund calls");
    assertEquals(1, sim.apis.trades().refundCount(kind, ref), "the gateway refunded exactly once");
    List<TradeBook.Refund> refunds = sim.apis.trades().refunds(kind).stream().filter(r -> r.tradeRef.equals(ref)).toList();
    assertEquals(1, refunds.size());
    assertEquals(event.getUUID("id").toString(), refunds.get(0).refundId, "the refund id is the outbox event id");
    assertEquals(CENTS, refunds.get(0).amountCents);
    assertEquals(TradeBook.RefundState.SUCCEEDED, refunds.get(0).state);
    assertEquals(exception(no).getString("txn_id"), refunds.get(0).txnId, "refunded the payment the exception is about");
    assertEquals(List.of("OPENED", "REFUND_REQUESTED", "REFUND_CONFIRMED"), history(no));
    assertEquals("CANCELLED", app.getOrder(no).getString("status"));
    notifyApp(kind);
  }

  @ParameterizedTest
  @ValueSource(strings = {"wechatpay-v3", "alipay", "stripe"})
  void aPendingRefundIsConfirmedByTheGatewaysRefundNotificationWhichNeverTouchesTheOrder(String kind) {
    String no = "RN" + kind.charAt(0) + UUID.randomUUID().toString().substring(0, 6);
    sim.apis.trades().refundOutcome(kind, TradeBook.RefundState.PENDING);
    String ref = latePayment(kind, no);
    eventually("the gateway accepted the refund", () -> "REFUND_PROCESSING".equals(status(no)));
    eventually("the request is delivered (the gateway settles it)", () -> "DELIVERED".equals(refundEvent(no).getString("status")));
    assertEquals(List.of("OPENED", "REFUND_REQUESTED", "REFUND_ACCEPTED"), history(no));
    long orderRows = orderSideRows(no);
    long notificationsBefore = app.count("SELECT count(*) FROM channel_notifications");
    String refundId = refundEvent(no).getUUID("id").toString();
    // A person cannot resolve it while the gateway holds the refund.
    assertEquals(409, app.call(HttpMethod.POST, "/admin/exceptions/" + exception(no).getLong("id") + "/resolve",
        new JsonObject().put("operator", "op").put("resolution", "REFUNDED_MANUALLY"), true).statusCode());

    assertNotNull(sim.apis.settle(kind, refundId, TradeBook.RefundState.SUCCEEDED, true));
    eventually("the refund notification confirmed it", () -> "REFUNDED".equals(status(no)));
    assertEquals(List.of("OPENED", "REFUND_REQUESTED", "REFUND_ACCEPTED", "REFUND_CONFIRMED"), history(no));
    String expectedEvent = switch (kind) {
      case "stripe" -> "refund.updated";
      case "alipay" -> "TRADE_CLOSED";
      default -> "REFUND.SUCCESS";
    };
    eventually("the notification is recorded as proof", () -> app.count(
        "SELECT count(*) FROM channel_notifications WHERE channel = $1 AND event_type = $2 AND payload LIKE '%' || $3 || '%'",
        channel(kind), expectedEvent, refundId) == 1);
    assertTrue(app.count("SELECT count(*) FROM channel_notifications") > notificationsBefore);
    assertEquals(orderRows, orderSideRows(no), "a refund notification changes nothing of the order or its payments");
    assertEquals("CANCELLED", app.getOrder(no).getString("status"));
    assertEquals(1, sim.apis.trades().refundCount(kind, ref));
    String detail = detail(no, "REFUND_CONFIRMED");
    assertTrue(detail.contains("refund notification"), detail);
  }

  @ParameterizedTest
  @ValueSource(strings = {"wechatpay-v3", "alipay", "stripe"})
  void aRefundTheGatewayFailsEndsRefundFailedForManualReview(String kind) {
    String no = "RX" + kind.charAt(0) + UUID.randomUUID().toString().substring(0, 6);
    sim.apis.trades().refundOutcome(kind, TradeBook.RefundState.FAILED);
    latePayment(kind, no);
    eventually("the refund failed", () -> "REFUND_FAILED".equals(status(no)));
    eventually("a refusal is an answer: delivered, not retried", () -> "DELIVERED".equals(refundEvent(no).getString("status")));
    assertEquals(1, refundEvent(no).getInteger("attempts"));
    assertEquals(List.of("OPENED", "REFUND_REQUESTED", "REFUND_FAILED"), history(no));
    expect(app.call(HttpMethod.POST, "/admin/exceptions/" + exception(no).getLong("id") + "/resolve",
        new JsonObject().put("operator", "op").put("resolution", "REFUNDED_MANUALLY"), true), 200);
  }

  @ParameterizedTest
  @ValueSource(strings = {"wechatpay-v3", "alipay", "stripe"})
  void aRefundOfATradeTheGatewayDoesNotKnowIsRefusedWithItsOwnErrorAndFails(String kind) {
    String no = "RU" + kind.charAt(0) + UUID.randomUUID().toString().substring(0, 6);
    app.createOrder(order(no, "u1", null, "A", 1, CENTS));
    expect(app.call(HttpMethod.POST, "/api/orders/" + no + "/cancel", null, false), 200);
    // A notification of a payment the simulator's trade book never saw (POST /sim/pay: notification only).
    var resp = sim.http.postAbs(sim.url() + "/sim/pay").sendBuffer(io.vertx.core.buffer.Buffer.buffer(new JsonObject()
        .put("kind", kind).put("orderNo", no).put("amountCents", CENTS)
        .put("notifyUrl", "http://127.0.0.1:" + app.verticle.port() + "/api/callbacks/" + channel(kind)).encode())).await();
    assertEquals(200, resp.statusCode(), resp.bodyAsString());
    eventually("the refund failed", () -> "REFUND_FAILED".equals(status(no)));
    String detail = detail(no, "REFUND_FAILED");
    String code = switch (kind) {
      case "wechatpay-v3" -> "RESOURCE_NOT_EXISTS";
      case "alipay" -> "ACQ.TRADE_NOT_EXIST";
      default -> "resource_missing";
    };
    assertTrue(detail.contains(code), detail);
    assertEquals(0, sim.apis.trades().refunds(kind).stream().filter(r -> no.equals(r.orderNo)).count());
  }

  @ParameterizedTest
  @ValueSource(strings = {"wechatpay-v3", "alipay", "stripe"})
  void aPendingRefundWhoseNotificationIsLostIsSettledByTheRefundQuery(String kind) {
    String no = "RQ" + kind.charAt(0) + UUID.randomUUID().toString().substring(0, 6);
    sim.apis.trades().refundOutcome(kind, TradeBook.RefundState.PENDING);
    String ref = latePayment(kind, no);
    eventually("the gateway accepted the refund", () -> "REFUND_PROCESSING".equals(status(no)));
    String refundId = refundEvent(no).getUUID("id").toString();
    sim.apis.settle(kind, refundId, TradeBook.RefundState.SUCCEEDED, false);
    eventually("the refund query confirmed it", () -> "REFUNDED".equals(status(no)));
    String detail = detail(no, "REFUND_CONFIRMED");
    assertTrue(detail.contains("refund query"), detail);
    assertEquals(1, sim.apis.trades().refundCount(kind, ref));
  }

  @org.junit.jupiter.api.Test
  void aRefundTheOutboxGaveUpOnIsRefundedWhenTheGatewayConfirmsItAndReconcileStaysClean() {
    String kind = "wechatpay-v3";
    String no = "RG" + UUID.randomUUID().toString().substring(0, 6);
    // Every answer is lost (the refund is made at the first call): the outbox uses its 10 attempts and gives up.
    sim.apis.notifier().webhook(kind, "http://127.0.0.1:1/gone");
    sim.fault(kind, new JsonObject().put("latencyMs", 1_200).put("ops", new JsonArray().add("refund")));
    String ref = latePayment(kind, no);
    eventually("the outbox gave up", () -> "REFUND_FAILED".equals(status(no)));
    assertEquals("DEAD", refundEvent(no).getString("status"));
    sim.clearFaults();
    TradeBook.Refund made = sim.apis.trades().refundOf(kind, refundEvent(no).getUUID("id").toString());
    assertNotNull(made, "the gateway did refund");

    // Its REFUND.SUCCESS notification (delivered twice) is the proof: REFUND_FAILED -> REFUNDED, once.
    dev.ordergate.sim.Delivery d = Sandbox.wechatpay().refundNotification(made, "SUCCESS", System.currentTimeMillis() / 1000);
    for (int i = 0; i < 2; i++) {
      var req = app.http.post("/api/callbacks/" + Sandbox.WECHATPAY);
      d.headers().forEach(req::putHeader);
      assertEquals(204, req.sendBuffer(io.vertx.core.buffer.Buffer.buffer(d.body())).await().statusCode());
    }
    assertEquals("REFUNDED", status(no));
    assertEquals(List.of("OPENED", "REFUND_REQUESTED", "REFUND_FAILED", "REFUND_CONFIRMED"), history(no));
    assertEquals(1, app.count("SELECT count(*) FROM channel_notifications WHERE event_type = 'REFUND.SUCCESS'"
        + " AND payload LIKE '%' || $1 || '%'", made.refundId), "recorded once per notification id");
    JsonObject reconcile = expect(app.call(HttpMethod.GET, "/admin/reconcile", null, true), 200).bodyAsJsonObject();
    assertTrue(reconcile.getBoolean("ok"), "a gateway-confirmed refund is not a violation: " + reconcile.encodePrettily());
    // Without the gateway's word, a REFUNDED exception whose request is not delivered still is one.
    app.rows("DELETE FROM exception_history WHERE event = 'REFUND_CONFIRMED'");
    assertTrue(!expect(app.call(HttpMethod.GET, "/admin/reconcile", null, true), 200).bodyAsJsonObject().getBoolean("ok"));
    assertEquals(1, sim.apis.trades().refundCount(kind, ref));
    notifyApp(kind);
  }
}
