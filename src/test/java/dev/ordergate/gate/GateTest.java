package dev.ordergate.gate;

import dev.ordergate.support.AppTest;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one-way gate, one behaviour per test, through the HTTP API against a real PostgreSQL. */
class GateTest extends AppTest {

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 10);
    app.setStock("B", 5);
    app.createCoupon("C1", "u1", 300);
  }

  @Test
  void creationTakesStockAndLocksCoupon() {
    JsonObject o = app.createOrder(order("O1", "u1", "C1", "A", 2, 500, "B", 1, 1000));
    assertEquals("PENDING_PAYMENT", o.getString("status"));
    assertEquals(2 * 500 + 1000 - 300, o.getLong("amountCents"));
    assertEquals(8, app.stock("A"));
    assertEquals(4, app.stock("B"));
    assertEquals("LOCKED", app.couponStatus("C1"));
    assertEquals("O1", app.rows("SELECT order_no FROM coupons WHERE code = 'C1'").get(0).getString(0));
    assertEquals(2, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'TAKE' AND order_no = 'O1'"));
    assertNotNull(o.getString("expiresAt"));
    JsonObject transitions = app.call(HttpMethod.GET, "/api/orders/O1/transitions", null, false)
        .bodyAsJsonArray().getJsonObject(0);
    assertNull(transitions.getString("from"));
    assertEquals("PENDING_PAYMENT", transitions.getString("to"));
    assertEquals("USER", transitions.getString("source"));
  }

  @Test
  void couponDiscountIsFlooredAtZero() {
    app.createCoupon("BIG", "u1", 1_000_000);
    assertEquals(0, app.createOrder(order("O1", "u1", "BIG", "A", 1, 100)).getLong("amountCents"));
  }

  @Test
  void creationFailsWholeWhenStockShort() {
    var resp = app.call(HttpMethod.POST, "/api/orders", order("O1", "u1", "C1", "A", 2, 500, "B", 6, 1000), false);
    expect(resp, 409);
    assertEquals("OUT_OF_STOCK", resp.bodyAsJsonObject().getString("error"));
    assertEquals(10, app.stock("A"));
    assertEquals(5, app.stock("B"));
    assertEquals("AVAILABLE", app.couponStatus("C1"));
    assertEquals(0, app.count("SELECT count(*) FROM orders"));
    assertEquals(0, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'TAKE'"));
  }

  @Test
  void creationFailsWholeWhenCouponUnavailable() {
    app.createOrder(order("O1", "u1", "C1", "A", 1, 500));
    var resp = app.call(HttpMethod.POST, "/api/orders", order("O2", "u1", "C1", "A", 1, 500), false);
    expect(resp, 409);
    assertEquals("COUPON_UNAVAILABLE", resp.bodyAsJsonObject().getString("error"));
    assertEquals(9, app.stock("A"));
    var other = app.call(HttpMethod.POST, "/api/orders", order("O3", "someone-else", "C1", "A", 1, 500), false);
    assertEquals("COUPON_UNAVAILABLE", expect(other, 409).bodyAsJsonObject().getString("error"));
  }

  @Test
  void repeatedCreateIsIdempotentAndADifferentBodyConflicts() {
    JsonObject req = order("O1", "u1", null, "A", 1, 500);
    app.createOrder(req);
    var again = expect(app.call(HttpMethod.POST, "/api/orders", req, false), 200);
    assertEquals("O1", again.bodyAsJsonObject().getString("orderNo"));
    assertEquals(9, app.stock("A"));
    var conflict = expect(app.call(HttpMethod.POST, "/api/orders", order("O1", "u1", null, "A", 2, 500), false), 409);
    assertEquals("ORDER_NO_CONFLICT", conflict.bodyAsJsonObject().getString("error"));
    assertEquals(9, app.stock("A"));
  }

  @Test
  void paymentAppliesOnceAndDuplicatesReturnTheFirstAnswer() {
    long amount = app.createOrder(order("O1", "u1", "C1", "A", 2, 500)).getLong("amountCents");
    JsonObject first = app.callback(payment("T1", "O1", amount));
    assertEquals("APPLIED", first.getString("outcome"));
    assertEquals("PAID", first.getString("orderStatus"));
    assertFalse(first.getBoolean("duplicate"));
    JsonObject again = app.callback(payment("T1", "O1", amount));
    assertEquals("APPLIED", again.getString("outcome"));
    assertTrue(again.getBoolean("duplicate"));
    JsonObject paid = app.getOrder("O1");
    assertEquals("PAID", paid.getString("status"));
    assertEquals("T1", paid.getString("paidTxnId"));
    assertEquals("PAYMENT_CALLBACK", paid.getString("closedBy"));
    assertEquals("USED", app.couponStatus("C1"));
    assertEquals(8, app.stock("A"));
    assertEquals(1, app.count("SELECT count(*) FROM payment_receipts"));
    assertEquals(1, app.count("SELECT count(*) FROM order_transitions WHERE to_status = 'PAID'"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
  }

  @Test
  void concurrentDuplicatesOfAnInFlightCallbackAllGetTheFirstAnswer() {
    long amount = app.createOrder(order("O1", "u1", null, "A", 1, 500)).getLong("amountCents");
    List<Future<JsonObject>> sent = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      sent.add(app.callbackAsync(payment("T1", "O1", amount)).map(r -> expect(r, 200).bodyAsJsonObject()));
    }
    Future.all(sent).await();
    long originals = sent.stream().filter(f -> !f.result().getBoolean("duplicate")).count();
    assertEquals(1, originals);
    sent.forEach(f -> assertEquals("APPLIED", f.result().getString("outcome")));
    assertEquals(1, app.count("SELECT count(*) FROM order_transitions WHERE to_status = 'PAID'"));
  }

  @Test
  void cancelRestocksAndReleasesExactlyOnceAndRepeatsChangeNothing() {
    app.createOrder(order("O1", "u1", "C1", "A", 2, 500, "B", 1, 1000));
    var first = expect(app.call(HttpMethod.POST, "/api/orders/O1/cancel", null, false), 200).bodyAsJsonObject();
    assertEquals("CANCELLED", first.getString("outcome"));
    for (int i = 0; i < 3; i++) {
      var again = expect(app.call(HttpMethod.POST, "/admin/orders/O1/cancel",
          new JsonObject().put("operator", "ops-1").put("reason", "duplicate click"), true), 200).bodyAsJsonObject();
      assertEquals("ALREADY_CANCELLED", again.getString("outcome"));
      assertEquals("CANCELLED", again.getString("status"));
    }
    assertEquals(10, app.stock("A"));
    assertEquals(5, app.stock("B"));
    assertEquals("AVAILABLE", app.couponStatus("C1"));
    assertEquals(2, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN' AND order_no = 'O1'"));
    assertEquals(1, app.count("SELECT count(*) FROM order_transitions WHERE order_no = 'O1' AND to_status = 'CANCELLED'"));
    assertEquals("USER", app.getOrder("O1").getString("closedBy"));
  }

  @Test
  void operatorCancelRecordsTheOperator() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    expect(app.call(HttpMethod.POST, "/admin/orders/O1/cancel",
        new JsonObject().put("operator", "alice").put("reason", "fraud check"), true), 200);
    var t = app.call(HttpMethod.GET, "/api/orders/O1/transitions", null, false).bodyAsJsonArray().getJsonObject(1);
    assertEquals("OPERATOR", t.getString("source"));
    assertEquals("alice", t.getString("actor"));
    assertEquals("fraud check", t.getString("reference"));
  }

  @Test
  void paymentAfterCancelOpensAnExceptionAndLeavesStockAndCouponAlone() {
    long amount = app.createOrder(order("O1", "u1", "C1", "A", 2, 500)).getLong("amountCents");
    expect(app.call(HttpMethod.POST, "/api/orders/O1/cancel", null, false), 200);
    JsonObject late = app.callback(payment("T1", "O1", amount));
    assertEquals("LATE_AFTER_CANCEL", late.getString("outcome"));
    assertEquals("CANCELLED", late.getString("orderStatus"));
    assertEquals(10, app.stock("A"));
    assertEquals("AVAILABLE", app.couponStatus("C1"));
    var exception = app.rows("SELECT kind, txn_id, amount_cents FROM exception_orders WHERE order_no = 'O1'");
    assertEquals(1, exception.size());
    assertEquals("LATE_AFTER_CANCEL", exception.get(0).getString("kind"));
    assertEquals(amount, exception.get(0).getLong("amount_cents"));
    assertEquals("CANCELLED", app.getOrder("O1").getString("status"));
    var listed = expect(app.call(HttpMethod.GET, "/admin/exceptions?status=OPEN", null, true), 200).bodyAsJsonArray();
    assertEquals("T1", listed.getJsonObject(0).getString("txnId"));
  }

  @Test
  void cancelAfterPaymentLosesAndLeavesStockAlone() {
    long amount = app.createOrder(order("O1", "u1", "C1", "A", 2, 500)).getLong("amountCents");
    app.callback(payment("T1", "O1", amount));
    var resp = expect(app.call(HttpMethod.POST, "/api/orders/O1/cancel", null, false), 409).bodyAsJsonObject();
    assertEquals("ALREADY_PAID", resp.getString("error"));
    assertEquals(8, app.stock("A"));
    assertEquals("USED", app.couponStatus("C1"));
    assertEquals(0, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN'"));
  }

  @Test
  void amountMismatchOpensAnExceptionWithoutATransition() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    JsonObject r = app.callback(payment("T1", "O1", 499));
    assertEquals("AMOUNT_MISMATCH", r.getString("outcome"));
    assertEquals("PENDING_PAYMENT", r.getString("orderStatus"));
    assertEquals("PENDING_PAYMENT", app.getOrder("O1").getString("status"));
    assertEquals(1, app.count("SELECT count(*) FROM order_transitions WHERE order_no = 'O1'"));
    assertEquals("AMOUNT_MISMATCH", app.rows("SELECT kind FROM exception_orders").get(0).getString(0));
    assertEquals("APPLIED", app.callback(payment("T2", "O1", 500)).getString("outcome"));
  }

  @Test
  void aSecondTransactionOnAPaidOrderIsADoublePayment() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    app.callback(payment("T1", "O1", 500));
    JsonObject r = app.callback(payment("T2", "O1", 500));
    assertEquals("DOUBLE_PAYMENT", r.getString("outcome"));
    assertEquals("T1", app.getOrder("O1").getString("paidTxnId"));
    assertEquals("DOUBLE_PAYMENT", app.rows("SELECT kind FROM exception_orders WHERE txn_id = 'T2'").get(0).getString(0));
  }

  @Test
  void paymentForAnUnknownOrderIsKeptAsAnException() {
    JsonObject r = app.callback(payment("T1", "NOPE", 500));
    assertEquals("UNKNOWN_ORDER", r.getString("outcome"));
    assertNull(r.getString("orderStatus"));
    assertEquals(1, app.count("SELECT count(*) FROM exception_orders WHERE kind = 'UNKNOWN_ORDER'"));
  }

  @Test
  void nonSuccessStatusIsRecordedAndIgnored() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    JsonObject r = app.callback(payment("T1", "O1", 500).put("status", "FAILED"));
    assertEquals("IGNORED", r.getString("outcome"));
    assertEquals("PENDING_PAYMENT", r.getString("orderStatus"));
    assertEquals("FAILED", app.rows("SELECT gateway_status FROM payment_notifications").get(0).getString(0));
    assertEquals(0, app.count("SELECT count(*) FROM payment_receipts"), "a non-final status claims no receipt");
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
  }

  @Test
  void anExpiredButNotYetCancelledOrderIsStillPaid() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500).put("paymentTimeoutSeconds", 1));
    app.pool.query("UPDATE orders SET expires_at = now() - interval '1 minute'").execute().await();
    assertEquals("APPLIED", app.callback(payment("T1", "O1", 500)).getString("outcome"));
  }

  @Test
  void transitionsAreCountedInMetrics() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    double before = app.metric("ordergate.transitions", "source", "PAYMENT_CALLBACK", "to", "PAID");
    app.callback(payment("T1", "O1", 500));
    assertEquals(before + 1, app.metric("ordergate.transitions", "source", "PAYMENT_CALLBACK", "to", "PAID"));
    String scrape = app.scrape();
    assertTrue(scrape.contains("ordergate_callbacks_total{channel=\"sandbox\",duplicate=\"false\",outcome=\"APPLIED\"}"),
        scrape);
    assertTrue(scrape.contains("ordergate_transitions_total{source=\"PAYMENT_CALLBACK\",to=\"PAID\"}"), scrape);
  }
}
