package dev.ordergate.http;

import dev.ordergate.reconcile.ReconcileMonitor;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;

/**
 * {@code GET /admin/reconcile}: runs the reconciliation now and answers its report (200 whether or
 * not it found violations: {@code "ok"} and {@code "violations"} say which). The drill uses it
 * against a running service whose database it cannot reach.
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
    r.route("/reconcile").handler(auth::authorize);
    r.get("/reconcile").handler(ctx -> monitor.runNow()
        .onSuccess(report -> Json.send(ctx, 200, report.toJson()))
        .onFailure(ctx::fail));
    return r;
  }
}
