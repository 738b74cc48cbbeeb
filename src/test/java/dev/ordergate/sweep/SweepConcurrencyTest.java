package dev.ordergate.sweep;

import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Several sweepers, and a sweep against payment callbacks, on the same due orders. */
class SweepConcurrencyTest {

  private static final Logger log = LoggerFactory.getLogger(SweepConcurrencyTest.class);
  private static TestApp app;

  @BeforeAll
  static void start() {
    app = TestApp.start();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @BeforeEach
  void clean() {
    app.truncate();
  }

  private static Pool pool() {
    return PgBuilder.pool().with(new PoolOptions().setMaxSize(2)).connectingTo(app.db.connectOptions())
        .using(app.vertx).build();
  }

  @Test
  void twoSweepersOnTheSameOverdueOrdersCancelEachExactlyOnce() {
    int n = 5_000;
    SweepFixtures.pendingOrders(app.pool, "TW", n, -60, true);
    Pool poolA = pool();
    Pool poolB = pool();
    try {
      Sweeper a = SweepFixtures.sweeper(app.vertx, poolA, SweepFixtures.config(100, 1_000, 0), "instance-a", BatchHook.NONE);
      Sweeper b = SweepFixtures.sweeper(app.vertx, poolB, SweepFixtures.config(100, 1_000, 0), "instance-b", BatchHook.NONE);
      Future<SweepRun> runA = a.runNow();
      Future<SweepRun> runB = b.runNow();
      Future.all(runA, runB).await();
      log.info("instance-a cancelled {}, instance-b cancelled {}", runA.result().cancelled(), runB.result().cancelled());
      assertNull(runA.result().error());
      assertNull(runB.result().error());
      assertEquals(n, runA.result().cancelled() + runB.result().cancelled());
      assertEquals(runA.result().claimed(), runA.result().cancelled());
      assertEquals(runB.result().claimed(), runB.result().cancelled());

      assertEquals(n, app.count("SELECT count(*) FROM orders WHERE status = 'CANCELLED' AND closed_by = 'TIMEOUT_SWEEP'"));
      assertEquals(n, app.count("SELECT count(*) FROM order_transitions WHERE from_status = 'PENDING_PAYMENT'"));
      assertEquals(n, app.count("SELECT count(DISTINCT order_no) FROM order_transitions WHERE from_status = 'PENDING_PAYMENT'"));
      Map<String, Long> byActor = new HashMap<>();
      for (Row r : app.rows("SELECT actor, count(*) FROM order_transitions WHERE source = 'TIMEOUT_SWEEP' GROUP BY actor")) {
        byActor.put(r.getString(0), r.getLong(1));
      }
      assertEquals(runA.result().cancelled(), byActor.getOrDefault("instance-a", 0L).intValue());
      assertEquals(runB.result().cancelled(), byActor.getOrDefault("instance-b", 0L).intValue());
      assertEquals(2L * n, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN'"));
      assertEquals(2L * n, app.count("SELECT count(DISTINCT (order_no, sku)) FROM inventory_ledger WHERE kind = 'RETURN'"));
      assertEquals(n, app.stock(SweepFixtures.SKU_A));
      assertEquals(2 * n, app.stock(SweepFixtures.SKU_B));
      assertEquals(n / 2, app.count("SELECT count(*) FROM coupons WHERE status = 'AVAILABLE' AND order_no IS NULL"));
      assertEquals(0, app.count("SELECT count(*) FROM coupons WHERE status <> 'AVAILABLE'"));
    } finally {
      poolA.close().await();
      poolB.close().await();
    }
  }

  @Test
  void aSweepRacingCallbacksLeavesEveryOrderInOneTerminalState() {
    int n = 200;
    SweepFixtures.pendingOrders(app.pool, "RC", n, -60, true);
    Sweeper sweeper = SweepFixtures.sweeper(app.vertx, app.pool, SweepFixtures.config(5, 1_000, 0), "racer",
        BatchHook.NONE);
    // Callbacks start from the newest order, the sweep from the oldest: they meet in the middle.
    List<Future<HttpResponse<Buffer>>> callbacks = new ArrayList<>();
    Future<SweepRun> sweep = sweeper.runNow();
    for (int i = n; i >= 1; i--) {
      callbacks.add(app.callbackAsync(payment("TX" + i, "RC" + i, SweepFixtures.AMOUNT_CENTS)));
    }
    Future.all(callbacks).await();
    SweepRun run = sweep.await();
    assertNull(run.error());

    Map<String, String> outcomes = new HashMap<>();
    for (int i = 0; i < n; i++) {
      var body = expect(callbacks.get(i).result(), 200).bodyAsJsonObject();
      outcomes.put(body.getString("orderNo"), body.getString("outcome"));
    }
    long applied = outcomes.values().stream().filter("APPLIED"::equals).count();
    long late = outcomes.values().stream().filter("LATE_AFTER_CANCEL"::equals).count();
    log.info("race: {} paid, {} cancelled by the sweep (in {} batches)", applied, late, run.batches());
    assertEquals(n, applied + late, "every callback either paid its order or lost to the sweep: " + outcomes);

    for (Row r : app.rows("SELECT order_no, status, coupon_code FROM orders")) {
      String orderNo = r.getString("order_no");
      String expected = outcomes.get(orderNo).equals("APPLIED") ? "PAID" : "CANCELLED";
      assertEquals(expected, r.getString("status"), orderNo);
      if (r.getString("coupon_code") != null) {
        assertEquals(expected.equals("PAID") ? "USED" : "AVAILABLE", app.couponStatus(r.getString("coupon_code")), orderNo);
      }
    }
    assertEquals(late, run.cancelled());
    assertEquals(n, app.count("SELECT count(DISTINCT order_no) FROM order_transitions WHERE from_status = 'PENDING_PAYMENT'"));
    assertEquals(n, app.count("SELECT count(*) FROM order_transitions WHERE from_status = 'PENDING_PAYMENT'"));
    assertEquals(late, app.count("SELECT count(*) FROM order_transitions WHERE source = 'TIMEOUT_SWEEP'"));
    assertEquals(late, app.count("SELECT count(*) FROM exception_orders WHERE kind = 'LATE_AFTER_CANCEL'"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders WHERE kind <> 'LATE_AFTER_CANCEL'"));
    assertEquals(late, app.stock(SweepFixtures.SKU_A));
    assertEquals(2 * late, app.stock(SweepFixtures.SKU_B));
    assertEquals(0, app.count("""
        SELECT count(*) FROM inventory_ledger l JOIN orders o ON o.order_no = l.order_no
        WHERE l.kind = 'RETURN' AND o.status <> 'CANCELLED'"""));
    assertTrue(app.count("SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT'") == 0);
  }
}
