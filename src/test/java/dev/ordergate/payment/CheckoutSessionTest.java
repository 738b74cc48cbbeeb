package dev.ordergate.payment;

import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.UUID;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Stripe Checkout Sessions (an order window that fits a Session's 30 min to 24 h), and the attempts'
 * states as the API reads them (paid by notification, cancelled, past the gateway deadline), against the
 * gateway simulator on a real PostgreSQL.
 */
class CheckoutSessionTest {

  private static final String STRIPE_KEY = "sk_test_DEVELOPMENT_ONLY_sandbox_0000000000000000";

  private static GatewaySim sim;
  private static TestApp app;
  private static Contract contract;

  @BeforeAll
  static void start() throws Exception {
    sim = new GatewaySim();
    contract = new Contract(sim.vertx);
    app = TestApp.start(sim.serviceConfig(new JsonObject().put("gatewayTimeoutMs", 2000)));
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
  }

  private static String newOrder(long cents, long timeoutSeconds) {
    String no = "CS" + UUID.randomUUID().toString().substring(0, 8);
    app.createOrder(order(no, "u1", null, "A", 1, cents).put("paymentTimeoutSeconds", timeoutSeconds));
    return no;
  }

  private static HttpResponse<Buffer> conforms(String operationId, HttpResponse<Buffer> resp) {
    return contract.conforms(operationId, resp);
  }

  private static JsonObject open(String orderNo, String channel) {
    HttpResponse<Buffer> r = conforms("openPayment", app.call(HttpMethod.POST, "/api/orders/" + orderNo + "/payments",
        new JsonObject().put("channel", channel), false));
    assertTrue(r.statusCode() == 201 || r.statusCode() == 200, r.bodyAsString());
    return r.bodyAsJsonObject();
  }

  private static JsonObject listed(String orderNo) {
    return TestApp.expect(conforms("listPayments", app.call(HttpMethod.GET, "/api/orders/" + orderNo + "/payments", null,
        false)), 200).bodyAsJsonObject().getJsonArray("attempts").getJsonObject(0);
  }

  /** The Session as Stripe's API answers it (the simulator's, with its PaymentIntent expanded). */
  private static JsonObject stripeSession(String id) {
    return sim.http.getAbs(sim.url() + "/stripe/v1/checkout/sessions/" + id + "?expand%5B%5D=payment_intent")
        .bearerTokenAuthentication(STRIPE_KEY).send().await().bodyAsJsonObject();
  }

  private static void expire(String orderNo) {
    app.pool.preparedQuery("UPDATE orders SET expires_at = now() - interval '1 second' WHERE order_no = $1")
        .execute(io.vertx.sqlclient.Tuple.of(orderNo)).await();
  }

  private static String exitSource(String orderNo) {
    return app.rows("SELECT source FROM order_transitions WHERE order_no = $1 AND from_status = 'PENDING_PAYMENT'",
        orderNo).get(0).getString("source");
  }

  @Test
  void aWindowOfAtLeastThirtyMinutesOpensACheckoutSessionWithTheOrderDeadline() {
    String no = newOrder(4321, 3600);
    Instant expiresAt = Instant.parse(app.getOrder(no).getString("expiresAt"));
    JsonObject attempt = open(no, Sandbox.STRIPE);
    String id = attempt.getString("gatewayReference");
    assertTrue(id.startsWith("cs_"), attempt.encode());
    assertTrue(attempt.getString("url").startsWith("https://checkout.stripe.com/"), attempt.encode());
    assertNull(attempt.getString("client_secret"));
    assertTrue(open(no, Sandbox.STRIPE).getBoolean("replayed"), "idempotent per (order, channel)");
    JsonObject cs = stripeSession(id);
    assertEquals("open", cs.getString("status"));
    assertEquals(expiresAt.getEpochSecond(), cs.getLong("expires_at"), "expires_at is the order's expiresAt");
    assertEquals(no, cs.getJsonObject("metadata").getString("orderNo"));
    assertEquals(no, cs.getString("client_reference_id"));
    assertEquals(4321, cs.getLong("amount_total"));

    // The default window (30 min, a few ms of it gone) and anything past 24 h: a PaymentIntent, as before.
    for (long timeout : new long[] {1800, 25 * 3600}) {
      JsonObject pi = open(newOrder(100, timeout), Sandbox.STRIPE);
      assertTrue(pi.getString("gatewayReference").startsWith("pi_"), timeout + ": " + pi.encode());
      assertTrue(pi.containsKey("client_secret"));
    }
    // Stripe's own bounds, as the simulator enforces them: a Session expiring in 10 minutes is refused.
    HttpResponse<Buffer> tooSoon = sim.http.postAbs(sim.url() + "/stripe/v1/checkout/sessions")
        .bearerTokenAuthentication(STRIPE_KEY).putHeader("Content-Type", "application/x-www-form-urlencoded")
        .sendBuffer(Buffer.buffer("mode=payment&line_items[0][price_data][currency]=cny&line_items[0][price_data]"
            + "[unit_amount]=100&line_items[0][quantity]=1&expires_at=" + (Instant.now().getEpochSecond() + 600))).await();
    assertEquals(400, tooSoon.statusCode(), tooSoon.bodyAsString());
  }

  @Test
  void aPaidSessionIsFoundByTheQueryAndItsTwoWebhooksAreDuplicates() {
    String no = newOrder(990, 3600);
    String id = open(no, Sandbox.STRIPE).getString("gatewayReference");
    JsonObject paid = sim.pay(app, "stripe", id, Sandbox.STRIPE, false);
    assertEquals(200, paid.getInteger("httpStatus"), paid.encode());
    String intent = stripeSession(id).getJsonObject("payment_intent").getString("id");
    assertEquals(no, stripeSession(id).getJsonObject("payment_intent").getJsonObject("metadata").getString("orderNo"),
        "payment_intent_data[metadata][orderNo] reaches the PaymentIntent");
    expire(no);
    app.verticle.sweeper().runNow().await();
    assertEquals("PAID", app.getOrder(no).getString("status"), "the sweep's query found the payment");
    assertEquals("PAYMENT_QUERY", exitSource(no));
    assertEquals(intent, app.getOrder(no).getString("paidTxnId"), "txn = the Session's PaymentIntent, as its webhooks say");
    JsonObject late = sim.pay(app, "stripe", id, Sandbox.STRIPE, true);
    JsonArray notifications = late.getJsonObject("report").getJsonArray("notifications");
    assertEquals(2, notifications.size(), "checkout.session.completed and payment_intent.succeeded");
    assertTrue(late.getJsonObject("report").getBoolean("accepted"), late.encode());
    assertEquals(1, app.count("SELECT count(*) FROM payment_receipts WHERE order_no = $1", no));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders WHERE order_no = $1", no));
    assertEquals("PAID", listed(no).getString("state"));
  }

  @Test
  void cancellingExpiresTheSessionSoItCanNoLongerBePaid() {
    String no = newOrder(310, 3600);
    String id = open(no, Sandbox.STRIPE).getString("gatewayReference");
    JsonObject answer = TestApp.expect(app.call(HttpMethod.POST, "/api/orders/" + no + "/cancel", new JsonObject(), false),
        200).bodyAsJsonObject();
    assertEquals("CANCELLED", answer.getString("outcome"));
    assertEquals("expired", stripeSession(id).getString("status"));
    assertEquals(409, sim.pay(app, "stripe", id, Sandbox.STRIPE, true).getInteger("httpStatus"));
    JsonObject attempt = listed(no);
    assertEquals("CLOSED", attempt.getString("state"));
    assertEquals("CLOSED", attempt.getString("recordedState"));
  }

  /**
   * Issue 10 part B: an attempt of an order paid by its notification reads PAID (derived at read time; the
   * callback's transaction writes nothing to payment_attempts), and so does the attempt of a cancelled order
   * whose payment still arrived (the money was taken at the gateway). The recorded state stays OPEN / CLOSED.
   */
  @Test
  void attemptsReadWhatHappenedToTheirPayment() {
    String paid = newOrder(500, 600);
    open(paid, Sandbox.WECHATPAY);
    JsonObject delivered = sim.pay(app, "wechatpay-v3", paid, Sandbox.WECHATPAY, true);
    assertTrue(delivered.getJsonObject("report").getBoolean("accepted"), delivered.encode());
    assertEquals("PAID", app.getOrder(paid).getString("status"));
    assertEquals("PAYMENT_CALLBACK", exitSource(paid));
    JsonObject a = listed(paid);
    assertEquals("PAID", a.getString("state"));
    assertEquals("OPEN", a.getString("recordedState"), "nothing was written to the attempt on the callback's path");
    assertEquals(app.getOrder(paid).getString("paidTxnId"), a.getString("paidTxnId"));
    assertEquals("OPEN", app.rows("SELECT state FROM payment_attempts WHERE order_no = $1", paid).get(0).getString("state"));

    // Alipay's trap: closed as unknown before the scan, then paid: the attempt reads PAID, the money is an exception.
    String trap = newOrder(880, 600);
    open(trap, Sandbox.ALIPAY);
    TestApp.expect(app.call(HttpMethod.POST, "/api/orders/" + trap + "/cancel", new JsonObject(), false), 200);
    assertEquals("CLOSED", listed(trap).getString("state"));
    sim.pay(app, "alipay", trap, Sandbox.ALIPAY, true);
    assertEquals("LATE_AFTER_CANCEL", app.rows("SELECT kind FROM exception_orders WHERE order_no = $1", trap)
        .get(0).getString("kind"));
    assertEquals("PAID", listed(trap).getString("state"));
    assertEquals("CLOSED", listed(trap).getString("recordedState"));
  }

  /** The simulator's notification faults: every notification dropped, then every one sent twice. */
  @Test
  void theSimulatorDropsAndDuplicatesNotificationsWhenToldTo() {
    sim.http.postAbs(sim.url() + "/sim/faults/wechatpay-v3/notifications")
        .sendBuffer(Buffer.buffer(new JsonObject().put("dropShare", 1.0).encode())).await();
    String lost = newOrder(120, 600);
    open(lost, Sandbox.WECHATPAY);
    JsonObject dropped = payDefault("wechatpay-v3", lost, Sandbox.WECHATPAY);
    assertEquals(false, dropped.getBoolean("notified"), dropped.encode());
    assertEquals("PENDING_PAYMENT", app.getOrder(lost).getString("status"), "the notification never came");
    sim.http.postAbs(sim.url() + "/sim/faults/wechatpay-v3/notifications")
        .sendBuffer(Buffer.buffer(new JsonObject().put("duplicateShare", 1.0).put("delayMs", 50).encode())).await();
    String twice = newOrder(130, 600);
    open(twice, Sandbox.WECHATPAY);
    JsonObject sent = payDefault("wechatpay-v3", twice, Sandbox.WECHATPAY);
    assertEquals(2, sent.getJsonObject("report").getJsonArray("notifications").size(), sent.encode());
    assertEquals("PAID", app.getOrder(twice).getString("status"));
  }

  /** The buyer pays; the request leaves the notification's fate to the simulator's faults. */
  private static JsonObject payDefault(String kind, String ref, String channel) {
    return sim.http.postAbs(sim.url() + "/sim/trades/" + kind + "/" + ref + "/pay")
        .sendBuffer(Buffer.buffer(new JsonObject()
            .put("notifyUrl", "http://127.0.0.1:" + app.verticle.port() + "/api/callbacks/" + channel).encode()))
        .await().bodyAsJsonObject();
  }

  /**
   * {@code payments.closeBeforeCancel: off} (the drill's baseline): the cancel calls no gateway, the trade stays
   * payable and the attempt reads UNCLOSED until its gateway deadline has passed, then CLOSED (the gateway closed
   * it itself); a PaymentIntent, which has no deadline, stays UNCLOSED.
   */
  @Test
  void offCancelsWithoutClosingAndTheAttemptSaysSo() throws Exception {
    try (TestApp off = TestApp.start(sim.serviceConfig(new JsonObject().put("closeBeforeCancel", "off")))) {
      off.setStock("A", 10);
      String no = "OF" + UUID.randomUUID().toString().substring(0, 8);
      off.createOrder(order(no, "u1", null, "A", 1, 100).put("paymentTimeoutSeconds", 2));
      String pi = "OP" + UUID.randomUUID().toString().substring(0, 8);
      off.createOrder(order(pi, "u1", null, "A", 1, 100).put("paymentTimeoutSeconds", 2));
      for (String[] o : new String[][] {{no, Sandbox.WECHATPAY}, {pi, Sandbox.STRIPE}}) {
        assertEquals(201, off.call(HttpMethod.POST, "/api/orders/" + o[0] + "/payments",
            new JsonObject().put("channel", o[1]), false).statusCode());
      }
      long calls = sim.stats("wechatpay-v3").getLong("calls");
      TestApp.expect(off.call(HttpMethod.POST, "/api/orders/" + no + "/cancel", new JsonObject(), false), 200);
      Thread.sleep(2_300);
      off.verticle.sweeper().runNow().await();
      assertEquals("CANCELLED", off.getOrder(pi).getString("status"), "the sweep cancels without closing");
      assertEquals(calls, sim.stats("wechatpay-v3").getLong("calls"), "no close, no query");
      assertEquals("OPEN", sim.trade("stripe", off.rows("SELECT gateway_reference FROM payment_attempts WHERE order_no = $1",
          pi).get(0).getString("gateway_reference")).getString("state"), "the PaymentIntent is still payable");
      JsonObject wechat = off.call(HttpMethod.GET, "/api/orders/" + no + "/payments", null, false).bodyAsJsonObject()
          .getJsonArray("attempts").getJsonObject(0);
      assertEquals("UNCLOSED", wechat.getString("recordedState"));
      assertEquals("CLOSED", wechat.getString("state"), "past time_expire the gateway closed it itself");
      JsonObject stripe = off.call(HttpMethod.GET, "/api/orders/" + pi + "/payments", null, false).bodyAsJsonObject()
          .getJsonArray("attempts").getJsonObject(0);
      assertEquals("UNCLOSED", stripe.getString("state"));
    }
  }
}
