package dev.ordergate.gate;

import dev.ordergate.reconcile.ReconcileReport;
import dev.ordergate.reconcile.Reconciler;
import dev.ordergate.support.AppTest;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 14, defect 1: only a SUCCESS notification claims the payment's idempotency key; a SUCCESS
 * duplicate that differs from the first is surfaced, never dropped; every verified delivery is
 * recorded, and reconcile proves every SUCCESS txn is accounted for.
 */
class NotificationKeyTest extends AppTest {

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 10);
  }

  private long create(String orderNo) {
    return app.createOrder(order(orderNo, "u1", null, "A", 1, 500)).getLong("amountCents");
  }

  @Test
  void pendingNotificationDoesNotSwallowTheLaterSuccess() {
    long amount = create("T");
    JsonObject first = app.callback(payment("TX1", "T", amount).put("status", "PENDING"));
    assertEquals("IGNORED", first.getString("outcome"));
    JsonObject paid = app.callback(payment("TX1", "T", amount));
    assertEquals("APPLIED", paid.getString("outcome"));
    assertFalse(paid.getBoolean("duplicate"));
    assertEquals("PAID", app.getOrder("T").getString("status"));
    // Both deliveries are recorded, the SUCCESS one with its payload.
    assertEquals(2, app.count("SELECT count(*) FROM payment_notifications WHERE txn_id = 'TX1'"));
    assertEquals(1, app.count("SELECT count(*) FROM payment_receipts WHERE txn_id = 'TX1' AND outcome = 'APPLIED'"));
  }

  @Test
  void nonFinalAfterSuccessChangesNothing() {
    long amount = create("T");
    app.callback(payment("TX1", "T", amount));
    JsonObject late = app.callback(payment("TX1", "T", amount).put("status", "CLOSED"));
    assertEquals("IGNORED", late.getString("outcome"));
    assertEquals("PAID", late.getString("orderStatus"));
    assertEquals("PAID", app.getOrder("T").getString("status"));
  }

  @Test
  void successDuplicateWithAnotherAmountGetsTheFirstAnswerAndAnException() {
    long amount = create("T");
    app.callback(payment("TX2", "T", amount));
    double before = app.metric("ordergate.callback.conflicts");
    JsonObject dup = app.callback(payment("TX2", "T", amount + 1));
    assertEquals("APPLIED", dup.getString("outcome"));
    assertTrue(dup.getBoolean("duplicate"));
    assertEquals(1, app.count("SELECT count(*) FROM exception_orders WHERE txn_id = 'TX2' "
        + "AND kind = 'CONFLICTING_DUPLICATE' AND status = 'MANUAL_REVIEW' AND amount_cents = $1", amount + 1));
    assertEquals(before + 1, app.metric("ordergate.callback.conflicts"));
    // Delivered again: the same exception, not a second one.
    app.callback(payment("TX2", "T", amount + 1));
    assertEquals(1, app.count("SELECT count(*) FROM exception_orders WHERE txn_id = 'TX2'"));
    assertEquals(0, violations("SUCCESS_NOTIFICATION_ACCOUNTED"));
  }

  @Test
  void successDuplicateForAnotherOrderIsSurfacedInTheSameBatchToo() {
    long a = create("T1");
    long b = create("T2");
    var f1 = app.callbackAsync(payment("TX3", "T1", a));
    var f2 = app.callbackAsync(payment("TX3", "T2", b));
    f1.await();
    f2.await();
    assertEquals(1, app.count("SELECT count(*) FROM exception_orders WHERE txn_id = 'TX3' AND kind = 'CONFLICTING_DUPLICATE'"));
    assertEquals(1, app.count("SELECT count(*) FROM orders WHERE status = 'PAID'"));
    assertEquals(0, violations("SUCCESS_NOTIFICATION_ACCOUNTED"));
  }

  /** Today's loss (a SUCCESS recorded as a duplicate of a PENDING, applied nowhere) is caught by reconcile. */
  @Test
  void reconcileCatchesASuccessThatNoOrderOrExceptionAccountsFor() {
    long amount = create("T");
    app.callback(payment("TX1", "T", amount).put("status", "PENDING"));
    assertEquals(0, violations("SUCCESS_NOTIFICATION_ACCOUNTED"));
    // The state the defect left: the SUCCESS delivery arrived, nothing applied it or opened an exception.
    app.rows("INSERT INTO payment_notifications (channel, txn_id, order_no, amount_cents, gateway_status) "
        + "VALUES ('sandbox', 'TX1', 'T', $1, 'SUCCESS')", amount);
    assertEquals(1, violations("SUCCESS_NOTIFICATION_ACCOUNTED"));
  }

  /** By name, so this class compiles against a main without the invariant (and fails there). */
  private static long violations(String invariant) {
    ReconcileReport report = new Reconciler(app.pool).run().await();
    return report.checks().stream().filter(c -> c.invariant().name().equals(invariant)).findFirst()
        .orElseThrow(() -> new AssertionError("no invariant " + invariant)).total();
  }
}
