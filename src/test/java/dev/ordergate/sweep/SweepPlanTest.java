package dev.ordergate.sweep;

import dev.ordergate.db.Params;
import dev.ordergate.db.SweepSql;
import dev.ordergate.support.TestApp;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The claim is served by the partial index, with the parameters bound (custom plan) and generic. */
class SweepPlanTest {

  private static TestApp app;

  @BeforeAll
  static void start() {
    app = TestApp.start();
    SweepFixtures.closedOrders(app.pool, "CL", 50_000);
    SweepFixtures.pendingOrders(app.pool, "FUT", 2_000, 3_600, false);
    SweepFixtures.pendingOrders(app.pool, "DUE", 100, -60, false);
    app.pool.query("ANALYZE orders").execute().await();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @Test
  void theStatusStaysALiteralInTheSweepSql() {
    assertTrue(SweepSql.CLAIM_DUE.contains("status = 'PENDING_PAYMENT'"));
    assertTrue(SweepSql.CLAIM_DUE.contains("FOR UPDATE SKIP LOCKED"));
    assertTrue(SweepSql.CLAIM_AND_CANCEL.contains("o.status = 'PENDING_PAYMENT'"));
    assertTrue(SweepSql.PLAN.contains("status = 'PENDING_PAYMENT'"));
  }

  @Test
  void claimUsesThePartialIndex() {
    String plan = explain(SweepSql.CLAIM_DUE, 0L, 500);
    assertTrue(plan.contains("\"Index Name\":\"orders_pending_expiry\""), plan);
    assertFalse(plan.contains("Seq Scan"), plan);
    assertFalse(plan.contains("\"Sort\""), "the index gives the order: " + plan);
  }

  @Test
  void theBatchStatementClaimsThroughThePartialIndex() {
    String plan = explain(SweepSql.CLAIM_AND_CANCEL, 0L, 500);
    assertTrue(plan.contains("\"Index Name\":\"orders_pending_expiry\""), plan);
    assertFalse(plan.contains("Seq Scan"), plan);
  }

  @Test
  void claimUsesThePartialIndexUnderAGenericPlan() {
    String plan = genericPlan(SweepSql.CLAIM_DUE);
    assertTrue(plan.contains("\"Index Name\":\"orders_pending_expiry\""), plan);
    assertFalse(plan.contains("Seq Scan"), plan);
  }

  @Test
  void theBatchStatementClaimsThroughThePartialIndexUnderAGenericPlan() {
    String plan = genericPlan(SweepSql.CLAIM_AND_CANCEL);
    assertTrue(plan.contains("\"Index Name\":\"orders_pending_expiry\""), plan);
    assertFalse(plan.contains("Seq Scan"), plan);
  }

  @Test
  void backlogAndNextExpiryQueriesUseThePartialIndex() {
    String plan = explain(SweepSql.PLAN, 0L);
    assertTrue(plan.contains("orders_pending_expiry"), plan);
    assertFalse(plan.contains("Seq Scan"), plan);
  }

  /** The plan of {@code sql} prepared with a grace of 0 and a batch of 500, under a generic plan. */
  private static String genericPlan(String sql) {
    return app.pool.withConnection(conn -> conn.query("SET plan_cache_mode = force_generic_plan").execute()
        .compose(v -> conn.query("PREPARE sweep_claim(float8, bigint) AS " + sql).execute())
        .compose(v -> conn.query("EXPLAIN (FORMAT JSON) EXECUTE sweep_claim(0, 500)").execute())
        .map(rows -> rows.iterator().next().getValue(0).toString())
        .eventually(() -> conn.query("DEALLOCATE ALL").execute().compose(v -> conn.query("RESET plan_cache_mode").execute())))
        .await();
  }

  private static String explain(String sql, Object... params) {
    Row row = app.pool.preparedQuery("EXPLAIN (FORMAT JSON) " + sql).execute(Params.of(params)).await()
        .iterator().next();
    return row.getValue(0).toString();
  }
}
