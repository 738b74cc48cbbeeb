package dev.ordergate.channel;

import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.Payment;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.util.LinkedHashMap;
import java.util.Map;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * What every gateway channel must do, over HTTP against the real service and PostgreSQL; one
 * subclass per kind supplies its notifications (built as the gateway builds them) and its answers.
 * Hooks returning null mark a check that does not exist for that gateway (Alipay signs no time).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class ChannelContract {

  protected static TestApp app;
  protected static final long AMOUNT = 500;

  @AfterAll
  static void stop() {
    app.close();
    app = null;
  }

  protected abstract String channel();

  /** A correctly signed notification that {@code p} was paid (status null: the gateway's paid status). */
  protected abstract Delivery paid(Payment p, long nowSeconds);

  /** A verified notification about the order that is not a payment (e.g. WAIT_BUYER_PAY). */
  protected abstract Delivery notPaid(Payment p);

  protected abstract Delivery forged(Payment p);

  protected abstract Delivery tampered(Payment p);

  protected abstract Delivery wrongKey(Payment p);

  /** Signed by the gateway but for another merchant / app; null where the gateway names none. */
  protected abstract Delivery wrongApp(Payment p);

  /** Verifies, but its content cannot be decrypted; null where nothing is encrypted. */
  protected Delivery undecryptable(Payment p) {
    return null;
  }

  /** Signed with the second configured key (rotation). */
  protected abstract Delivery rotated(Payment p);

  /** True when the gateway signs a time, so stale and future notifications exist. */
  protected abstract boolean signsTime();

  protected abstract void assertSuccessAnswer(HttpResponse<Buffer> resp);

  protected abstract void assertFailureAnswer(HttpResponse<Buffer> resp, String code);

  /** Our own failure: a 5xx (503 when the database is unreachable, 500 for this closed pool) in the dialect. */
  protected abstract void assertRetryAnswer(HttpResponse<Buffer> resp);

  protected static void assertServerError(HttpResponse<Buffer> resp) {
    org.junit.jupiter.api.Assertions.assertTrue(resp.statusCode() == 500 || resp.statusCode() == 503,
        resp.statusCode() + " " + resp.bodyAsString());
  }

  protected static long now() {
    return System.currentTimeMillis() / 1000;
  }

  protected Payment payment(String txn, long amount) {
    return new Payment("O1", txn, amount, "CNY", null);
  }

  protected HttpResponse<Buffer> send(Delivery d) {
    var req = app.http.post("/api/callbacks/" + channel());
    d.headers().forEach(req::putHeader);
    return req.sendBuffer(Buffer.buffer(d.body())).await();
  }

  @BeforeEach
  void freshOrder() {
    app.truncate();
    app.pool.query("TRUNCATE channel_notifications").execute().await();
    app.setStock("A", 10);
    app.createOrder(order("O1", "u1", null, "A", 1, AMOUNT));
  }

  private String status() {
    return app.rows("SELECT status FROM orders WHERE order_no = 'O1'").get(0).getString(0);
  }

  private void assertNothingChanged() {
    assertEquals("PENDING_PAYMENT", status());
    assertEquals(0, app.count("SELECT count(*) FROM payment_receipts"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
    assertEquals(0, app.count("SELECT count(*) FROM channel_notifications"));
    assertEquals(0, app.count("SELECT count(*) FROM payment_notifications"));
  }

  @Test
  @Order(1)
  void paymentAppliesOnceAndDuplicatesGetTheFirstAnswer() {
    Payment p = payment("TXN1", AMOUNT);
    Delivery d = paid(p, now());
    HttpResponse<Buffer> first = send(d);
    assertSuccessAnswer(first);
    assertEquals("APPLIED", first.getHeader("X-Ordergate-Outcome"));
    assertEquals("PAID", status());
    for (int i = 0; i < 3; i++) {
      HttpResponse<Buffer> again = send(d);
      assertEquals(first.statusCode(), again.statusCode());
      assertArrayEquals(bytes(first), bytes(again));
      assertEquals("APPLIED,DUPLICATE", again.getHeader("X-Ordergate-Outcome"));
    }
    var receipt = app.rows("SELECT txn_id, currency, outcome FROM payment_receipts");
    assertEquals(1, receipt.size());
    assertEquals(p.txnId(), receipt.get(0).getString("txn_id"));
    assertEquals("CNY", receipt.get(0).getString("currency"));
    var noted = app.rows("SELECT notification_id, payload, deliveries FROM payment_notifications");
    assertEquals(1, noted.size());
    assertNotNull(noted.get(0).getString("notification_id"), "the gateway's own notification id is kept");
    assertNotNull(noted.get(0).getString("payload"), "the verified payload is kept");
    assertEquals(4, noted.get(0).getInteger("deliveries"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
    assertEquals(1, app.count("SELECT count(*) FROM outbox_events_shown WHERE type = 'ORDER_PAID'"));
  }

  @Test
  @Order(2)
  void latePaymentAfterCancelOpensAnExceptionOrder() {
    expect(app.call(HttpMethod.POST, "/api/orders/O1/cancel", null, false), 200);
    HttpResponse<Buffer> resp = send(paid(payment("TXN1", AMOUNT), now()));
    assertSuccessAnswer(resp);
    assertEquals("LATE_AFTER_CANCEL", resp.getHeader("X-Ordergate-Outcome"));
    assertEquals("CANCELLED", status());
    assertEquals("LATE_AFTER_CANCEL", app.rows("SELECT kind FROM exception_orders").get(0).getString(0));
  }

  @Test
  @Order(3)
  void aSecondPaymentOfAPaidOrderIsADoublePayment() {
    assertSuccessAnswer(send(paid(payment("TXN1", AMOUNT), now())));
    Payment again = payment("TXN2", AMOUNT);
    HttpResponse<Buffer> second = send(paid(again, now()));
    assertSuccessAnswer(second);
    assertEquals("DOUBLE_PAYMENT", second.getHeader("X-Ordergate-Outcome"));
    assertEquals("DOUBLE_PAYMENT", app.rows("SELECT kind FROM exception_orders WHERE txn_id = $1", again.txnId())
        .get(0).getString(0));
  }

  @Test
  @Order(4)
  void aWrongAmountIsAnAmountMismatchAndNeverApplied() {
    HttpResponse<Buffer> resp = send(paid(payment("TXN1", AMOUNT - 1), now()));
    assertSuccessAnswer(resp);
    assertEquals("AMOUNT_MISMATCH", resp.getHeader("X-Ordergate-Outcome"));
    assertEquals("PENDING_PAYMENT", status());
    assertEquals("AMOUNT_MISMATCH", app.rows("SELECT kind FROM exception_orders").get(0).getString(0));
  }

  @Test
  @Order(5)
  void anotherCurrencyIsAnAmountMismatchAndNeverApplied() {
    app.pool.query("UPDATE orders SET currency = 'USD' WHERE order_no = 'O1'").execute().await();
    HttpResponse<Buffer> resp = send(paid(payment("TXN1", AMOUNT), now()));
    assertSuccessAnswer(resp);
    assertEquals("AMOUNT_MISMATCH", resp.getHeader("X-Ordergate-Outcome"));
    assertEquals("PENDING_PAYMENT", status());
    assertEquals(1, app.count("SELECT count(*) FROM exception_orders WHERE kind = 'AMOUNT_MISMATCH'"));
  }

  @Test
  @Order(6)
  void aVerifiedNotificationThatIsNotAPaymentIsRecordedAndLeavesTheOrderAlone() {
    Delivery d = notPaid(payment("TXN1", AMOUNT));
    HttpResponse<Buffer> resp = send(d);
    assertSuccessAnswer(resp);
    assertEquals("IGNORED", resp.getHeader("X-Ordergate-Outcome"));
    assertSuccessAnswer(send(d));
    assertEquals("PENDING_PAYMENT", status());
    assertEquals(0, app.count("SELECT count(*) FROM payment_receipts"));
    // Recorded once: with the gate when it names a transaction (Alipay WAIT_BUYER_PAY, an unpaid Checkout
    // Session), else apart (a WeChat Pay refund event).
    assertEquals(1, app.count("SELECT count(*) FROM channel_notifications")
        + app.count("SELECT count(*) FROM payment_notifications"), "recorded once");
    // The real payment of the same transaction still applies: the non-payment claimed nothing.
    HttpResponse<Buffer> paidResp = send(paid(payment("TXN1", AMOUNT), now()));
    assertSuccessAnswer(paidResp);
    assertEquals("APPLIED", paidResp.getHeader("X-Ordergate-Outcome"));
    assertEquals("PAID", status());
  }

  @Test
  @Order(7)
  void forgedStaleFutureTamperedWrongKeyWrongAppAndUndecryptableChangeNothing() {
    Payment p = payment("TXN1", AMOUNT);
    Map<String, Delivery> bad = new LinkedHashMap<>();
    bad.put("forged:BAD_SIGNATURE", forged(p));
    bad.put("tampered:BAD_SIGNATURE", tampered(p));
    bad.put("wrong key:BAD_SIGNATURE", wrongKey(p));
    if (signsTime()) {
      // A minute outside the 300 s tolerance: at + 301 a notification verified a second after it was built was
      // inside again, and on a loaded machine the test failed ("future: expected BAD_SIGNATURE but was APPLIED").
      bad.put("stale:BAD_SIGNATURE", paid(p, now() - 360));
      bad.put("future:BAD_SIGNATURE", paid(p, now() + 360));
    }
    if (wrongApp(p) != null) {
      bad.put("wrong app:WRONG_MERCHANT", wrongApp(p));
    }
    if (undecryptable(p) != null) {
      bad.put("undecryptable:UNDECRYPTABLE", undecryptable(p));
    }
    bad.forEach((what, d) -> {
      HttpResponse<Buffer> resp = send(d);
      String code = what.substring(what.indexOf(':') + 1);
      assertEquals(code, resp.getHeader("X-Ordergate-Outcome"), what);
      assertFailureAnswer(resp, code);
    });
    assertNothingChanged();
    assertEquals("APPLIED", send(paid(p, now())).getHeader("X-Ordergate-Outcome"),
        "the same payment, correctly signed, still applies afterwards");
  }

  @Test
  @Order(8)
  void aRotatedKeyVerifies() {
    HttpResponse<Buffer> resp = send(rotated(payment("TXN1", AMOUNT)));
    assertSuccessAnswer(resp);
    assertEquals("APPLIED", resp.getHeader("X-Ordergate-Outcome"));
  }

  @Test
  @Order(100)
  void ourOwnFailureAnswersTheGatewaysRetryAnswerAndLosesNothing() {
    Delivery d = paid(payment("TXN1", AMOUNT), now());
    app.verticle.pool().close().await();
    assertRetryAnswer(send(d));
    assertEquals("PENDING_PAYMENT", status());
    assertEquals(0, app.count("SELECT count(*) FROM payment_receipts"));
  }

  private static byte[] bytes(HttpResponse<Buffer> r) {
    return r.body() == null ? new byte[0] : r.body().getBytes();
  }

  protected static JsonObject json(HttpResponse<Buffer> r) {
    return r.bodyAsJsonObject();
  }
}
