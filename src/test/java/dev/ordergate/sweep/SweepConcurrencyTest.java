package dev.ordergate.sweep;

import dev.ordergate.db.Params;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancellationEffects;
import dev.ordergate.outbox.OutboxSignal;
import dev.ordergate.outbox.OutboxWriter;
import dev.ordergate.support.AppTest;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Several sweepers, and a sweep against payment callbacks, on the same due orders. */
class SweepConcurrencyTest extends AppTest {

  private static final Logger log = LoggerFactory.getLogger(SweepConcurrencyTest.class);
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
    Sweeper sweeper = SweepFixtures.sweeper(app.vertx, app.pool, SweepFixtures.config(5, 1_000, 0), "racer",
        BatchHook.NONE);
    List<String> anomalies = race(() -> sweeper.runNow().compose(run -> run.error() == null
        ? Future.succeededFuture(run.cancelled())
        : Future.failedFuture(new IllegalStateException(run.error()))));
    assertEquals(List.of(), anomalies);
  }

  /** The race check can fail: a check-then-act sweep (read, then cancel unconditionally) is caught. */
  @Test
  void theRaceCheckCatchesACheckThenActSweep() {
    firstRead = io.vertx.core.Promise.promise();
    List<String> anomalies = race(this::checkThenActSweep);
    firstRead = null;
    log.info("anomalies found with a check-then-act sweep: {}", anomalies);
    assertTrue(!anomalies.isEmpty(), "a broken sweep must be detected");
  }

  /**
   * Deliberately broken: reads due orders without a lock, then cancels them without a status
   * condition. Between the read and the write it waits until a payment has landed on one of them
   * (as a slow remote call or a GC pause would let happen): the interleaving that breaks a
   * check-then-act sweep, made certain so the check's verdict does not depend on the machine's speed.
   */
  private Future<Integer> checkThenActSweep() {
    return checkThenActSweep(true);
  }

  /**
   * Completed by the broken sweep once its first read is done: the race sends its callbacks only then,
   * so the read cannot come after every payment has landed on a loaded machine (it once did, and
   * the check found nothing to catch).
   */
  private io.vertx.core.Promise<Void> firstRead;

  private Future<Integer> checkThenActSweep(boolean waitForAPayment) {
    return app.pool.query("SELECT order_no FROM orders WHERE status = 'PENDING_PAYMENT' AND expires_at <= now() "
            + "ORDER BY expires_at LIMIT 5").execute()
        .compose(rows -> {
          if (firstRead != null) {
            firstRead.tryComplete();
          }
          if (rows.size() == 0) {
            return Future.succeededFuture(0);
          }
          List<String> due = new ArrayList<>();
          rows.forEach(r -> due.add(r.getString(0)));
          Future<?> window = waitForAPayment ? untilOneIsPaid(due, System.currentTimeMillis() + 10_000) : app.vertx.timer(20);
          return window.compose(t -> Tx.run(app.pool, conn -> conn.preparedQuery(
                      "UPDATE orders SET status = 'CANCELLED', cancelled_at = now(), closed_by = 'TIMEOUT_SWEEP' "
                          + "WHERE order_no = ANY($1::text[])").execute(Params.array(due.toArray(String[]::new)))
                  .compose(v -> new CancellationEffects(new OutboxWriter(new OutboxSignal())).apply(conn, new CancellationEffects.Cancelled(due,
                      Collections.nCopies(due.size(), "broken"), Collections.nCopies(due.size(), "broken")),
                      TransitionSource.TIMEOUT_SWEEP))))
              .compose(v -> checkThenActSweep(false).map(n -> n + due.size()));
        });
  }

  private Future<Void> untilOneIsPaid(List<String> orderNos, long deadline) {
    return app.pool.preparedQuery("SELECT count(*) FROM orders WHERE order_no = ANY($1::text[]) AND status = 'PAID'")
        .execute(Params.array(orderNos.toArray(String[]::new)))
        .compose(rows -> rows.iterator().next().getLong(0) > 0 || System.currentTimeMillis() > deadline
            ? Future.<Void>succeededFuture()
            : app.vertx.timer(5).compose(t -> untilOneIsPaid(orderNos, deadline)));
  }

  /**
   * 200 due orders; each gets one SUCCESS callback while {@code sweep} runs. Callbacks start from the
   * newest order, the sweep from the oldest: they meet in the middle. Answers every anomaly found.
   */
  private List<String> race(Supplier<Future<Integer>> sweep) {
    app.truncate();
    int n = 200;
    SweepFixtures.pendingOrders(app.pool, "RC", n, -60, true);
    List<String> anomalies = new ArrayList<>();
    List<Future<HttpResponse<Buffer>>> callbacks = new ArrayList<>();
    Future<Integer> swept = sweep.get();
    if (firstRead != null) {
      firstRead.future().await();
    }
    for (int i = n; i >= 1; i--) {
      callbacks.add(app.callbackAsync(payment("TX" + i, "RC" + i, SweepFixtures.AMOUNT_CENTS)));
    }
    Future.join(callbacks).transform(v -> Future.succeededFuture()).await();
    swept.transform(v -> Future.succeededFuture()).await();
    if (swept.failed()) {
      anomalies.add("sweep failed: " + swept.cause().getMessage());
    }
    Map<String, String> outcomes = new HashMap<>();
    for (Future<HttpResponse<Buffer>> f : callbacks) {
      if (f.failed() || f.result().statusCode() != 200) {
        anomalies.add("callback failed: " + (f.failed() ? f.cause() : f.result().bodyAsString()));
        continue;
      }
      var body = f.result().bodyAsJsonObject();
      outcomes.put(body.getString("orderNo"), body.getString("outcome"));
    }
    long late = outcomes.values().stream().filter("LATE_AFTER_CANCEL"::equals).count();
    log.info("race: {} paid, {} lost to the sweep", outcomes.size() - late, late);
    outcomes.forEach((orderNo, outcome) -> {
      if (!outcome.equals("APPLIED") && !outcome.equals("LATE_AFTER_CANCEL")) {
        anomalies.add(orderNo + ": callback answered " + outcome);
      }
    });
    long cancelled = 0;
    for (Row r : app.rows("SELECT order_no, status, coupon_code FROM orders")) {
      String orderNo = r.getString("order_no");
      String outcome = outcomes.get(orderNo);
      String expected = "APPLIED".equals(outcome) ? "PAID" : "LATE_AFTER_CANCEL".equals(outcome) ? "CANCELLED" : "?";
      if (!expected.equals(r.getString("status"))) {
        anomalies.add(orderNo + ": status " + r.getString("status") + " but the callback answered " + outcome);
      }
      cancelled += "CANCELLED".equals(r.getString("status")) ? 1 : 0;
      if (r.getString("coupon_code") != null) {
        String coupon = app.couponStatus(r.getString("coupon_code"));
        String want = "PAID".equals(r.getString("status")) ? "USED" : "CANCELLED".equals(r.getString("status"))
            ? "AVAILABLE" : "LOCKED";
        if (!want.equals(coupon)) {
          anomalies.add(orderNo + ": coupon " + coupon + " on a " + r.getString("status") + " order");
        }
      }
    }
    check(anomalies, "orders with other than one exit transition", app.count("""
        SELECT count(*) FROM orders o WHERE (SELECT count(*) FROM order_transitions t
          WHERE t.order_no = o.order_no AND t.from_status = 'PENDING_PAYMENT') <> 1"""), 0);
    check(anomalies, "sweep transitions", app.count(
        "SELECT count(*) FROM order_transitions WHERE source = 'TIMEOUT_SWEEP'"), cancelled);
    check(anomalies, "LATE_AFTER_CANCEL exceptions", app.count(
        "SELECT count(*) FROM exception_orders WHERE kind = 'LATE_AFTER_CANCEL'"), late);
    check(anomalies, "other exceptions", app.count(
        "SELECT count(*) FROM exception_orders WHERE kind <> 'LATE_AFTER_CANCEL'"), 0);
    check(anomalies, "stock " + SweepFixtures.SKU_A, app.stock(SweepFixtures.SKU_A), cancelled);
    check(anomalies, "stock " + SweepFixtures.SKU_B, app.stock(SweepFixtures.SKU_B), 2 * cancelled);
    check(anomalies, "RETURN rows of orders not cancelled", app.count("""
        SELECT count(*) FROM inventory_ledger l JOIN orders o ON o.order_no = l.order_no
        WHERE l.kind = 'RETURN' AND o.status <> 'CANCELLED'"""), 0);
    if (swept.succeeded()) {
      check(anomalies, "cancellations the sweep reported", swept.result(), cancelled);
    }
    return anomalies;
  }

  private static void check(List<String> anomalies, String what, long actual, long expected) {
    if (actual != expected) {
      anomalies.add(what + ": " + actual + ", expected " + expected);
    }
  }
}
