package dev.ordergate.console;

import dev.ordergate.db.ConsoleSql;
import dev.ordergate.db.Params;
import dev.ordergate.db.Rows;
import dev.ordergate.reconcile.ReconcileMonitor;
import dev.ordergate.reconcile.ReconcileReport;
import dev.ordergate.sweep.Sweeper;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

import java.util.concurrent.TimeUnit;

/**
 * The overview's compact summary ({@code GET /admin/summary}): counters from the database (every
 * instance's work), the last sweep run of any instance, and this instance's cancel-lateness p99 and
 * last reconciliation.
 */
public final class Overview {

  private final Pool pool;
  private final Sweeper sweeper;
  private final ReconcileMonitor reconcile;
  private final MeterRegistry registry;

  public Overview(Pool pool, Sweeper sweeper, ReconcileMonitor reconcile, MeterRegistry registry) {
    this.pool = pool;
    this.sweeper = sweeper;
    this.reconcile = reconcile;
    this.registry = registry;
  }

  public Future<JsonObject> summary() {
    return pool.preparedQuery(ConsoleSql.SUMMARY).execute(Params.of((double) sweeper.config().graceSeconds()))
        .compose(rows -> {
          Row r = rows.iterator().next();
          Object byKind = r.getValue("today_by_kind");
          JsonObject out = new JsonObject()
              .put("pendingOrders", r.getLong("pending"))
              .put("overdueOrders", r.getLong("overdue"))
              .put("manualReview", r.getLong("manual_review"))
              .put("refundsPending", r.getLong("refunds_pending"))
              .put("refundsProcessing", r.getLong("refunds_processing"))
              .put("refundsFailed", r.getLong("refunds_failed"))
              .put("outboxPending", r.getLong("outbox_pending"))
              .put("outboxDead", r.getLong("outbox_dead"))
              .put("exceptionsToday", byKind instanceof JsonObject o ? o : new JsonObject())
              .put("dayStart", Rows.instant(r.getOffsetDateTime("day_start")))
              .put("cancelLatenessP99Seconds", latenessP99());
          ReconcileReport last = reconcile.lastReport();
          out.put("lastReconciliation", last == null ? null : new JsonObject()
              .put("startedAt", last.startedAt().toString()).put("ok", last.ok())
              .put("violations", last.violationCount()));
          return sweeper.recentRuns(null, 1).map(runs -> out.put("lastSweep", runs.isEmpty() ? null : runs.get(0).toJson()));
        });
  }

  /**
   * The upper bound of the histogram bucket holding the 99th percentile of this instance's sweep
   * lateness (null before any sweep cancellation; beyond the last bucket: its bound).
   */
  Double latenessP99() {
    Timer t = registry.find("ordergate.cancel.lateness").timer();
    if (t == null || t.count() == 0) {
      return null;
    }
    CountAtBucket[] buckets = t.takeSnapshot().histogramCounts();
    double wanted = Math.ceil(t.count() * 0.99);
    for (CountAtBucket b : buckets) {
      if (b.count() >= wanted) {
        return b.bucket(TimeUnit.SECONDS);
      }
    }
    return buckets.length == 0 ? null : buckets[buckets.length - 1].bucket(TimeUnit.SECONDS);
  }
}
