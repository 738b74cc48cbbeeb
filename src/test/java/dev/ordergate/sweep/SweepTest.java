package dev.ordergate.sweep;

import dev.ordergate.config.SweepConfig;
import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sweep's behaviour through the service's own sweeper and the admin endpoints. */
class SweepTest {

  private static TestApp app;
  private static SweepConfig initial;

  @BeforeAll
  static void start() {
    app = TestApp.start();
    initial = app.verticle.sweeper().config();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @BeforeEach
  void fixtures() {
    app.verticle.sweeper().reconfigure(initial).await();
    app.truncate();
    app.setStock("A", 10);
    app.setStock("B", 5);
    app.createCoupon("C1", "u1", 300);
  }

  private static void expire(String orderNo, long secondsAgo) {
    app.pool.preparedQuery("UPDATE orders SET expires_at = now() - make_interval(secs => $2) WHERE order_no = $1")
        .execute(io.vertx.sqlclient.Tuple.of(orderNo, secondsAgo)).await();
  }

  private static JsonObject runSweep() {
    return expect(app.call(HttpMethod.POST, "/admin/sweeps/run", null, true), 200).bodyAsJsonObject();
  }

  @Test
  void sweepCancelsExactlyTheOverdueOrdersAndRestocksAndReleasesOnce() {
    app.createOrder(order("DUE1", "u1", "C1", "A", 2, 500, "B", 1, 1000));
    app.createOrder(order("DUE2", "u2", null, "A", 1, 500));
    app.createOrder(order("NOTDUE", "u3", null, "A", 3, 500));
    long paidAmount = app.createOrder(order("PAID", "u4", null, "B", 1, 1000)).getLong("amountCents");
    app.callback(payment("T1", "PAID", paidAmount));
    expire("DUE1", 60);
    expire("DUE2", 1);
    expire("PAID", 60);

    JsonObject run = runSweep();
    assertEquals(2, run.getInteger("claimed"));
    assertEquals(2, run.getInteger("cancelled"));
    assertEquals(1, run.getInteger("batches"));
    assertNull(run.getString("error"));
    assertNotNull(run.getString("finishedAt"));
    assertEquals(app.verticle.sweeper().instanceId(), run.getString("instanceId"));

    assertEquals("CANCELLED", app.getOrder("DUE1").getString("status"));
    assertEquals("TIMEOUT_SWEEP", app.getOrder("DUE1").getString("closedBy"));
    assertEquals("CANCELLED", app.getOrder("DUE2").getString("status"));
    assertEquals("PENDING_PAYMENT", app.getOrder("NOTDUE").getString("status"));
    assertEquals("PAID", app.getOrder("PAID").getString("status"));
    assertEquals(10 - 3, app.stock("A"));
    assertEquals(5 - 1, app.stock("B"));
    assertEquals("AVAILABLE", app.couponStatus("C1"));

    JsonObject again = runSweep();
    assertEquals(0, again.getInteger("cancelled"));
    assertEquals(0, again.getInteger("batches"));
    assertEquals(7, app.stock("A"));
    assertEquals(3, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN'"));
    assertEquals(2, app.count("SELECT count(*) FROM order_transitions WHERE source = 'TIMEOUT_SWEEP'"));
    JsonObject t = app.call(HttpMethod.GET, "/api/orders/DUE1/transitions", null, false).bodyAsJsonArray()
        .getJsonObject(1);
    assertEquals("PENDING_PAYMENT", t.getString("from"));
    assertEquals("CANCELLED", t.getString("to"));
    assertEquals("TIMEOUT_SWEEP", t.getString("source"));
    assertEquals(run.getString("instanceId"), t.getString("actor"));
    assertEquals("sweep-run:" + run.getLong("id"), t.getString("reference"));
  }

  @Test
  void graceLeavesARecentlyExpiredOrderForALateCallback() {
    app.verticle.sweeper().reconfigure(SweepFixtures.config(500, 50, 120)).await();
    app.createOrder(order("RECENT", "u1", null, "A", 1, 500));
    app.createOrder(order("OLD", "u2", null, "A", 1, 500));
    expire("RECENT", 60);
    expire("OLD", 180);
    assertEquals(1, runSweep().getInteger("cancelled"));
    assertEquals("PENDING_PAYMENT", app.getOrder("RECENT").getString("status"));
    assertEquals("CANCELLED", app.getOrder("OLD").getString("status"));
    assertEquals("APPLIED", app.callback(payment("T1", "RECENT", 500)).getString("outcome"));
  }

  @Test
  void runLogListsRunsNewestFirstAndNeedsTheAdminToken() {
    long first = runSweep().getLong("id");
    long second = runSweep().getLong("id");
    JsonArray runs = expect(app.call(HttpMethod.GET, "/admin/sweeps?limit=1", null, true), 200).bodyAsJsonArray();
    assertEquals(1, runs.size());
    JsonObject row = runs.getJsonObject(0);
    assertEquals(second, row.getLong("id"));
    for (String key : new String[] {"id", "instanceId", "startedAt", "finishedAt", "batches", "claimed", "cancelled", "error"}) {
      assertTrue(row.containsKey(key), key);
    }
    JsonArray both = expect(app.call(HttpMethod.GET, "/admin/sweeps", null, true), 200).bodyAsJsonArray();
    assertEquals(first, both.getJsonObject(1).getLong("id"));
    expect(app.call(HttpMethod.GET, "/admin/sweeps", null, false), 401);
    expect(app.call(HttpMethod.POST, "/admin/sweeps/run", null, false), 401);
    expect(app.call(HttpMethod.GET, "/admin/sweeps?limit=0", null, true), 400);
    assertEquals(2, app.count("SELECT count(*) FROM sweep_runs"));
  }

  @Test
  void runsOnOneInstanceNeverOverlap() {
    SweepFixtures.pendingOrders(app.pool, "OV", 300, -60, true);
    app.verticle.sweeper().reconfigure(SweepFixtures.config(20, 100, 0)).await();
    var a = app.callAsync(HttpMethod.POST, "/admin/sweeps/run", null, true);
    var b = app.callAsync(HttpMethod.POST, "/admin/sweeps/run", null, true);
    var c = app.callAsync(HttpMethod.POST, "/admin/sweeps/run", null, true);
    Future.all(a, b, c).await();
    var rows = app.rows("SELECT started_at, finished_at, cancelled FROM sweep_runs ORDER BY id");
    assertEquals(3, rows.size());
    for (int i = 1; i < rows.size(); i++) {
      assertFalse(rows.get(i).getOffsetDateTime("started_at").isBefore(rows.get(i - 1).getOffsetDateTime("finished_at")),
          "run " + i + " started before the previous one finished");
    }
    assertEquals(300, rows.stream().mapToInt(r -> r.getInteger("cancelled")).sum());
    assertEquals(300, rows.get(0).getInteger("cancelled"));
  }

  @Test
  void aFailedBatchIsRecordedInTheRunLogAndTheNextRunFinishesTheJob() {
    SweepFixtures.pendingOrders(app.pool, "F", 35, -60, true);
    AtomicBoolean failSecondBatch = new AtomicBoolean(true);
    // One batch at a time: with two in flight, batch 3 may start before batch 2 fails.
    Sweeper sweeper = SweepFixtures.sweeper(app.vertx, app.pool, SweepFixtures.config(10, 50, 0, 1), "flaky-1",
        (runId, batchNo, cancelled) -> failSecondBatch.get() && batchNo == 2
            ? Future.failedFuture(new IllegalStateException("injected failure"))
            : Future.succeededFuture());

    SweepRun failed = sweeper.runNow().await();
    assertTrue(failed.failed());
    assertTrue(failed.error().contains("batch 2 failed"), failed.error());
    assertTrue(failed.error().contains("injected failure"), failed.error());
    assertTrue(failed.error().contains("left to the next run"), failed.error());
    assertEquals(1, failed.batches());
    assertEquals(10, failed.cancelled());
    assertNotNull(failed.finishedAt());
    assertEquals(10, app.count("SELECT count(*) FROM orders WHERE status = 'CANCELLED'"));
    assertEquals(20, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN'"));

    JsonObject listed = expect(app.call(HttpMethod.GET, "/admin/sweeps?limit=1", null, true), 200)
        .bodyAsJsonArray().getJsonObject(0);
    assertEquals(failed.id(), listed.getLong("id"));
    assertEquals(failed.error(), listed.getString("error"));

    failSecondBatch.set(false);
    SweepRun next = sweeper.runNow().await();
    assertNull(next.error());
    assertEquals(25, next.cancelled());
    assertEquals(3, next.batches());
    assertEquals(35, app.count("SELECT count(*) FROM orders WHERE status = 'CANCELLED'"));
    assertEquals(35, app.count("SELECT count(DISTINCT order_no) FROM order_transitions WHERE from_status = 'PENDING_PAYMENT'"));
    assertEquals(70, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN'"));
    assertEquals(35, app.stock(SweepFixtures.SKU_A));
    assertEquals(70, app.stock(SweepFixtures.SKU_B));
    assertEquals(0, app.count("SELECT count(*) FROM coupons WHERE status = 'LOCKED'"));
  }

  /**
   * Two batches in flight at once: batch 1 runs alone and comes back full, then batch 2 waits in its hook,
   * before its commit and holding its stock rows, until another batch is seen waiting for those rows (its
   * claim, cancel and outbox rows written); a run that kept one batch at a time would never get there. Every
   * order is cancelled once.
   */
  @Test
  void twoBatchesInFlightRunAtOnceAndCancelEachOrderOnce() {
    SweepFixtures.pendingOrders(app.pool, "P", 400, -60, true);
    AtomicBoolean overlapped = new AtomicBoolean();
    Sweeper sweeper = SweepFixtures.sweeper(app.vertx, app.pool, SweepFixtures.config(50, 100, 0, 2), "lanes-1",
        (runId, batchNo, cancelled) -> batchNo != 2 ? Future.succeededFuture()
            : restockWaiting(System.nanoTime() + TimeUnit.SECONDS.toNanos(10)).map(seen -> {
              overlapped.set(seen);
              return null;
            }));

    SweepRun run = sweeper.runNow().await();
    assertNull(run.error());
    assertTrue(overlapped.get(), "another batch was in flight while batch 2 had not committed");
    assertEquals(400, run.cancelled());
    assertEquals(400, run.claimed());
    assertEquals(8, run.batches());
    assertEquals(400, app.count("SELECT count(*) FROM orders WHERE status = 'CANCELLED'"));
    assertEquals(400, app.count("SELECT count(*) FROM order_transitions WHERE source = 'TIMEOUT_SWEEP'"));
    assertEquals(400, app.count("SELECT count(DISTINCT order_no) FROM order_transitions WHERE source = 'TIMEOUT_SWEEP'"));
    assertEquals(800, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN'"));
    assertEquals(800, app.count("SELECT count(*) FROM outbox_events WHERE type IN ('ORDER_CANCELLED', 'NOTIFY_SMS')"));
    assertEquals(400, app.stock(SweepFixtures.SKU_A));
    assertEquals(800, app.stock(SweepFixtures.SKU_B));
  }

  /** Polls until another backend waits for a stock row's lock (true), or the deadline passes (false). */
  private static Future<Boolean> restockWaiting(long deadline) {
    return app.pool.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            + "AND wait_event_type = 'Lock' AND query LIKE '%FROM inventory i%'").execute()
        .compose(rows -> rows.iterator().next().getLong(0) > 0 ? Future.succeededFuture(true)
            : System.nanoTime() > deadline ? Future.succeededFuture(false)
            : app.vertx.timer(20, TimeUnit.MILLISECONDS).compose(v -> restockWaiting(deadline)));
  }

  /**
   * The effects are statements sent together: when one of them (here the stock lock) fails, the whole batch is
   * undone and its error, not the aborted transaction's, is the one the run log shows.
   */
  @Test
  void aStockRowLockedPastTheLockTimeoutUndoesTheWholeBatchAndNamesTheLock() {
    SweepFixtures.pendingOrders(app.pool, "L", 6, -60, true);
    SqlConnection holder = app.pool.getConnection().await();
    JsonObject run;
    try {
      Transaction tx = holder.begin().await();
      holder.query("SELECT sku FROM inventory WHERE sku = '" + SweepFixtures.SKU_B + "' FOR UPDATE").execute().await();
      run = runSweep();
      tx.rollback().await();
    } finally {
      holder.close().await();
    }
    assertEquals(0, run.getInteger("cancelled"));
    assertTrue(run.getString("error").contains("lock timeout"), run.getString("error"));
    assertEquals(6, app.count("SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT'"));
    assertEquals(0, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN'"));
    assertEquals(0, app.count("SELECT count(*) FROM order_transitions WHERE source = 'TIMEOUT_SWEEP'"));
    assertEquals(0, app.count("SELECT count(*) FROM outbox_events WHERE type IN ('ORDER_CANCELLED', 'NOTIFY_SMS')"));
    assertEquals(3, app.count("SELECT count(*) FROM coupons WHERE status = 'LOCKED'"));

    JsonObject again = runSweep();
    assertNull(again.getString("error"));
    assertEquals(6, again.getInteger("cancelled"));
    assertEquals(12, app.count("SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN'"));
    assertEquals(6, app.stock(SweepFixtures.SKU_A));
    assertEquals(12, app.stock(SweepFixtures.SKU_B));
    assertEquals(12, app.count("SELECT count(*) FROM outbox_events WHERE type IN ('ORDER_CANCELLED', 'NOTIFY_SMS')"));
    assertEquals(0, app.count("SELECT count(*) FROM coupons WHERE status = 'LOCKED'"));
  }

  private static long bucket(String scrape, String le) {
    String prefix = "ordergate_cancel_lateness_seconds_bucket{le=\"" + le + "\"} ";
    return scrape.lines().filter(l -> l.startsWith(prefix)).findFirst()
        .map(l -> (long) Double.parseDouble(l.substring(prefix.length()))).orElse(0L);
  }

  @Test
  void sweepMetricsCountRunsCancellationsLatenessAndTheBacklog() {
    SweepFixtures.pendingOrders(app.pool, "M", 30, -90, true);
    app.verticle.sweeper().reconfigure(SweepFixtures.config(10, 2, 0)).await();
    double runsBefore = app.metric("ordergate.sweep.runs", "result", "ok");
    double cancelledBefore = app.metric("ordergate.sweep.cancelled");
    String scrapeBefore = app.scrape();
    JsonObject run = runSweep();
    assertEquals(20, run.getInteger("cancelled"), "maxBatchesPerRun caps the run");
    assertEquals(runsBefore + 1, app.metric("ordergate.sweep.runs", "result", "ok"));
    assertEquals(cancelledBefore + 20, app.metric("ordergate.sweep.cancelled"));
    assertEquals(10, app.registry.get("ordergate.overdue.orders").gauge().value());
    var lateness = app.registry.get("ordergate.cancel.lateness").timer();
    assertTrue(lateness.count() >= 20);
    assertTrue(lateness.max(TimeUnit.SECONDS) >= 89, "lateness is cancelledAt - expiresAt: " + lateness.max(TimeUnit.SECONDS));
    String scrape = app.scrape();
    assertEquals(bucket(scrapeBefore, "60.0"), bucket(scrape, "60.0"), "90 s late is not within 60 s");
    assertEquals(bucket(scrapeBefore, "120.0") + 20, bucket(scrape, "120.0"), "90 s late is within 120 s");
    for (String name : new String[] {"ordergate_sweep_runs_total{result=\"ok\"}", "ordergate_sweep_cancelled_total",
        "ordergate_sweep_duration_seconds_count", "ordergate_cancel_lateness_seconds_bucket",
        "ordergate_overdue_orders", "ordergate_transitions_total{source=\"TIMEOUT_SWEEP\",to=\"CANCELLED\"}"}) {
      assertTrue(scrape.contains(name), name);
    }
    assertTrue(Instant.parse(run.getString("finishedAt")).compareTo(Instant.parse(run.getString("startedAt"))) >= 0);
  }
}
