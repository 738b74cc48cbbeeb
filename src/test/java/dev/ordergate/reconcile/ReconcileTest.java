package dev.ordergate.reconcile;

import dev.ordergate.support.TestApp;
import dev.ordergate.tools.Tools;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import java.util.Set;
import java.util.TreeSet;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The reconciliation over a database the service built through its API (orders in every state,
 * each kind of exception), then corrupted on purpose with one SQL statement per invariant: each
 * corruption is reported as exactly its own kind, with the order it concerns.
 */
class ReconcileTest {

  private static TestApp app;
  private static Reconciler reconciler;

  @BeforeAll
  static void start() {
    // The outbox relay is off: its deliveries would race the TRUNCATE of each fixture (deadlock).
    app = TestApp.start(TestApp.baseConfig().put("reconcile", new JsonObject().put("periodMs", 1000))
        .put("outbox", new JsonObject().put("enabled", false)));
    reconciler = new Reconciler(app.pool);
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  /** P1 pending (coupon locked), A1 paid (coupon used), C1 cancelled (coupon released), X1 paid late
   * after cancel, D1 paid twice, M1 paid with a wrong amount (still pending), E1 left to expire. */
  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 100);
    app.setStock("B", 50);
    app.createCoupon("CP", "u1", 100);
    app.createCoupon("CA", "u1", 100);
    app.createCoupon("CC", "u1", 100);
    app.createOrder(order("P1", "u1", "CP", "A", 1, 500));
    long a1 = app.createOrder(order("A1", "u1", "CA", "A", 2, 500, "B", 1, 300)).getLong("amountCents");
    app.callback(payment("T-A1", "A1", a1));
    app.createOrder(order("C1", "u1", "CC", "A", 2, 500, "B", 1, 300));
    expect(app.call(HttpMethod.POST, "/api/orders/C1/cancel", null, false), 200);
    long x1 = app.createOrder(order("X1", "u2", null, "B", 1, 700)).getLong("amountCents");
    expect(app.call(HttpMethod.POST, "/admin/orders/X1/cancel",
        new JsonObject().put("operator", "ops").put("reason", "test"), true), 200);
    assertEquals("LATE_AFTER_CANCEL", app.callback(payment("T-X1", "X1", x1)).getString("outcome"));
    long d1 = app.createOrder(order("D1", "u3", null, "A", 1, 900)).getLong("amountCents");
    app.callback(payment("T-D1a", "D1", d1));
    assertEquals("DOUBLE_PAYMENT", app.callback(payment("T-D1b", "D1", d1)).getString("outcome"));
    app.createOrder(order("M1", "u4", null, "B", 2, 400));
    assertEquals("AMOUNT_MISMATCH", app.callback(payment("T-M1", "M1", 1)).getString("outcome"));
    app.callback(payment("T-F1", "M1", 800).put("status", "FAILED"));
  }

  private static ReconcileReport reconcile() {
    return reconciler.run().await();
  }

  private static Set<String> kinds(ReconcileReport report) {
    Set<String> out = new TreeSet<>();
    report.violations().forEach(v -> out.add(v.invariant().name()));
    return out;
  }

  private static void corrupt(String sql) {
    app.pool.query(sql).execute().await();
  }

  private static void assertOnly(Invariant expected, String subject) {
    assertOnly(Set.of(expected), subject);
  }

  private static void assertOnly(Set<Invariant> expected, String subject) {
    ReconcileReport report = reconcile();
    Set<String> names = new TreeSet<>();
    expected.forEach(i -> names.add(i.name()));
    assertEquals(names, kinds(report), report.summary());
    assertTrue(report.violations().stream().allMatch(v -> subject.equals(v.orderNo()) || subject.equals(v.sku())),
        report.summary());
    assertFalse(report.ok());
  }

  @Test
  void aCleanDatabaseHasNoViolation() {
    ReconcileReport report = reconcile();
    assertTrue(report.ok(), report.summary());
    assertEquals(0, report.violationCount());
    assertTrue(report.checks().stream().filter(c -> c.skipped() == null).count() >= 8);
  }

  @Test
  void statusThatIsNotTheLastTransitionIsReported() {
    corrupt("UPDATE order_transitions SET to_status = 'PAID' WHERE order_no = 'C1' AND from_status = 'PENDING_PAYMENT'");
    assertOnly(Invariant.STATUS_IS_LAST_TRANSITION, "C1");
  }

  @Test
  void aSecondExitFromPendingIsReported() {
    // The unique index order_transitions_one_exit forbids this corruption; a naive schema would not.
    corrupt("DROP INDEX order_transitions_one_exit");
    corrupt("INSERT INTO order_transitions (order_no, from_status, to_status, source, actor) "
        + "SELECT 'A1', 'PENDING_PAYMENT', 'PAID', 'PAYMENT_CALLBACK', 'replayed'");
    try {
      assertOnly(Invariant.ONE_EXIT_FROM_PENDING, "A1");
    } finally {
      corrupt("DELETE FROM order_transitions WHERE actor = 'replayed'");
      corrupt("CREATE UNIQUE INDEX order_transitions_one_exit ON order_transitions (order_no) "
          + "WHERE from_status = 'PENDING_PAYMENT'");
    }
  }

  @Test
  void stockThatIsNotTheLedgerTotalIsReported() {
    corrupt("UPDATE inventory SET available = available + 1 WHERE sku = 'A'");
    assertOnly(Invariant.STOCK_IS_LEDGER_TOTAL, "A");
  }

  @Test
  void aCancelledOrderWithoutItsReturnIsReported() {
    corrupt("WITH gone AS (DELETE FROM inventory_ledger WHERE order_no = 'C1' AND sku = 'A' AND kind = 'RETURN' "
        + "RETURNING sku, delta) UPDATE inventory i SET available = i.available - g.delta FROM gone g WHERE i.sku = g.sku");
    assertOnly(Invariant.CANCELLED_RETURNED_ONCE, "C1");
  }

  @Test
  void aReturnForAPaidOrderIsReported() {
    corrupt("WITH r AS (INSERT INTO inventory_ledger (sku, delta, kind, order_no, actor) "
        + "VALUES ('A', 2, 'RETURN', 'A1', 'bug') RETURNING sku, delta) "
        + "UPDATE inventory i SET available = i.available + r.delta FROM r WHERE i.sku = r.sku");
    assertOnly(Invariant.OPEN_ORDERS_RETURNED_NOTHING, "A1");
  }

  @Test
  void aCouponReleasedFromAPaidOrderIsReported() {
    corrupt("UPDATE coupons SET status = 'AVAILABLE', order_no = NULL WHERE code = 'CA'");
    assertOnly(Invariant.COUPON_FOLLOWS_ORDER, "A1");
  }

  @Test
  void aPaymentNeitherAppliedNorInAnExceptionIsReported() {
    corrupt("UPDATE exception_orders SET txn_id = txn_id || '-lost' WHERE order_no = 'X1'");
    // Both the receipt's check and the delivered notification's check see the lost payment.
    assertOnly(Set.of(Invariant.SUCCESS_RECEIPT_ACCOUNTED, Invariant.SUCCESS_NOTIFICATION_ACCOUNTED), "X1");
  }

  @Test
  void aPaidOrderWithoutItsAppliedReceiptIsReported() {
    corrupt("UPDATE payment_receipts SET outcome = 'IGNORED', gateway_status = 'FAILED' WHERE txn_id = 'T-A1'");
    assertOnly(Invariant.PAID_HAS_ONE_APPLIED_RECEIPT, "A1");
  }

  @Test
  void aRefundedExceptionWithoutADeliveredRefundIsReported() {
    assumeTrue(app.rows("SELECT to_regclass('outbox_events') IS NOT NULL").get(0).getBoolean(0),
        "the outbox (migration V3) is not in this build");
    corrupt("UPDATE exception_orders SET status = 'REFUNDED' WHERE order_no = 'X1'");
    assertOnly(Invariant.REFUNDED_HAS_DELIVERED_REQUEST, "X1");
  }

  @Test
  void theAdminEndpointAndTheGaugeReportTheViolations() {
    JsonObject clean = expect(app.call(HttpMethod.GET, "/admin/reconcile", null, true), 200).bodyAsJsonObject();
    assertTrue(clean.getBoolean("ok"), clean.encodePrettily());
    expect(app.call(HttpMethod.GET, "/admin/reconcile", null, false), 401);
    corrupt("UPDATE inventory SET available = available + 1 WHERE sku IN ('A', 'B')");
    JsonObject dirty = expect(app.call(HttpMethod.GET, "/admin/reconcile", null, true), 200).bodyAsJsonObject();
    assertFalse(dirty.getBoolean("ok"));
    assertEquals(2, dirty.getLong("violations"));
    String scrape = app.scrape();
    assertTrue(scrape.contains("ordergate_reconcile_violations 2.0"), scrape);
  }

  @Test
  void theCommandExitsZeroWhenCleanAndOneWithEachViolationListed(@TempDir Path dir) throws Exception {
    Path report = dir.resolve("reconcile.json");
    assertEquals(0, Tools.run("reconcile", new String[] {"--db-url", app.db.uri(), "--report", report.toString()}));
    assertTrue(new JsonObject(Files.readString(report)).getBoolean("ok"));
    corrupt("UPDATE coupons SET status = 'AVAILABLE', order_no = NULL WHERE code = 'CA'");
    assertEquals(1, Tools.run("reconcile", new String[] {"--db-url", app.db.uri(), "--report", report.toString()}));
    JsonObject json = new JsonObject(Files.readString(report));
    assertEquals(1, json.getLong("violations"));
    assertTrue(json.encode().contains("\"orderNo\":\"A1\""), json.encodePrettily());
    assertEquals(2, Tools.run("reconcile", new String[] {"--no-such-option"}));
  }

  @Test
  void theTimerRunsTheReconciliationAndUpdatesTheGauge() throws InterruptedException {
    corrupt("UPDATE inventory SET available = available + 1 WHERE sku = 'B'");
    double seen = Double.NaN;
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (System.nanoTime() < deadline) {
      seen = app.registry.get("ordergate.reconcile.violations").gauge().value();
      if (seen == 1.0) {
        break;
      }
      Thread.sleep(100);
    }
    assertEquals(1.0, seen);
  }
}
