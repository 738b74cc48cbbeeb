package dev.ordergate.http;

import dev.ordergate.reconcile.ReconcileMonitor;
import dev.ordergate.reconcile.ReconcileReport;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code GET /admin/reconcile}: runs the reconciliation now and answers its report (200 whether or
 * not it found violations: {@code "ok"} and {@code "violations"} say which). The drill uses it
 * against a running service whose database it cannot reach. {@code POST /admin/reconcile/run} is
 * the console's "run now" (audited, CSRF-checked like every change); {@code GET
 * /admin/reconcile/last} answers this instance's last report without running one (404 before the first).
 */
public final class ReconcileRoutes {

  private final AdminRoutes auth;
  private final ReconcileMonitor monitor;

  public ReconcileRoutes(AdminRoutes auth, ReconcileMonitor monitor) {
    this.auth = auth;
    this.monitor = monitor;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.route("/reconcile*").handler(auth::authorize);
    r.get("/reconcile").handler(ctx -> monitor.runNow()
        .onSuccess(report -> Json.send(ctx, 200, report.toJson()))
        .onFailure(ctx::fail));
    r.post("/reconcile/run").handler(this::run);
    r.get("/reconcile/last").handler(ctx -> {
      ReconcileReport last = monitor.lastReport();
      if (last == null) {
        throw dev.ordergate.domain.Rejection.notFound("a reconciliation report (none has run on this instance)");
      }
      Json.send(ctx, 200, last.toJson());
    });
    return r;
  }

  private void run(RoutingContext ctx) {
    auth.audit().record(AdminAuth.actor(ctx, null, false), "RUN_RECONCILIATION", null, null, monitor::runNow,
            report -> report.ok() ? "OK" : "VIOLATIONS")
        .onSuccess(report -> Json.send(ctx, 200, report.toJson()))
        .onFailure(ctx::fail);
  }
}
