package dev.ordergate.reconcile;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the reconciler inside the service: on a timer ({@code reconcile.periodMs}, re-armed after
 * each run finishes) and on demand ({@code GET /admin/reconcile}). Exports
 * {@code ordergate_reconcile_violations}: the count of the last run (NaN before the first), so an
 * alert can fire on {@code > 0}. Each violation is logged at warn.
 */
public final class ReconcileMonitor {

  private static final Logger log = LoggerFactory.getLogger(ReconcileMonitor.class);

  private final Vertx vertx;
  private final Reconciler reconciler;
  private final long periodMs;
  private volatile double lastViolations = Double.NaN;
  private volatile ReconcileReport lastReport;
  private volatile boolean stopped;
  private long timerId = -1;

  public ReconcileMonitor(Vertx vertx, Reconciler reconciler, MeterRegistry registry, long periodMs) {
    this.vertx = vertx;
    this.reconciler = reconciler;
    this.periodMs = periodMs;
    Gauge.builder("ordergate.reconcile.violations", this, m -> m.lastViolations)
        .description("Invariant violations found by the last reconciliation (NaN before the first run)")
        .register(registry);
  }

  /** Arms the timer when a period is configured. */
  public void start() {
    if (periodMs > 0) {
      log.info("reconciliation every {} ms", periodMs);
      arm();
    }
  }

  public void stop() {
    stopped = true;
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
    }
  }

  private void arm() {
    if (!stopped) {
      timerId = vertx.setTimer(periodMs, id -> runNow().onComplete(ar -> arm()));
    }
  }

  /** This instance's last report, or null before the first run. */
  public ReconcileReport lastReport() {
    return lastReport;
  }

  /** One reconciliation now; updates the gauge and logs what it found. */
  public Future<ReconcileReport> runNow() {
    return reconciler.run()
        .onSuccess(report -> {
          lastViolations = report.violationCount();
          lastReport = report;
          if (report.ok()) {
            log.debug("reconciliation: all invariants hold ({} ms)", report.durationMs());
          } else {
            log.warn("reconciliation: {} violation(s)", report.violationCount());
            report.violations().forEach(v -> log.warn("reconciliation violation: {}", v.line()));
          }
        })
        .onFailure(err -> log.error("reconciliation failed: {}", err.toString()));
  }
}
