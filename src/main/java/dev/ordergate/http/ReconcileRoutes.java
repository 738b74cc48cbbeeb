package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import dev.ordergate.reconcile.GatewayReconciler;
import dev.ordergate.reconcile.ReconcileMonitor;
import dev.ordergate.reconcile.ReconcileReport;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.time.LocalDate;
import java.time.format.DateTimeParseException;

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
  private final GatewayReconciler gateway;

  public ReconcileRoutes(AdminRoutes auth, ReconcileMonitor monitor) {
    this(auth, monitor, null);
  }

  /** With {@code gateway}: also {@code GET /admin/reconcile/gateway?channel=&date=} (issue 10, report only). */
  public ReconcileRoutes(AdminRoutes auth, ReconcileMonitor monitor, GatewayReconciler gateway) {
    this.auth = auth;
    this.monitor = monitor;
    this.gateway = gateway;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.route("/reconcile*").handler(auth::authorize);
    r.get("/reconcile").handler(ctx -> monitor.runNow()
        .onSuccess(report -> Json.send(ctx, 200, report.toJson()))
        .onFailure(ctx::fail));
    r.post("/reconcile/run").handler(this::run);
    if (gateway != null) {
      r.get("/reconcile/gateway").handler(this::gateway);
    }
    r.get("/reconcile/last").handler(ctx -> {
      ReconcileReport last = monitor.lastReport();
      if (last == null) {
        throw Rejection.notFound("a reconciliation report (none has run on this instance)");
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

  /**
   * The day's bill of one channel against our books, read only (missing payments are reported, never applied
   * here: {@code scripts/reconcile --gateway ... --apply} applies them). 400 for a bad channel or date, 502
   * {@code GATEWAY_ERROR} when the gateway refuses, 503 {@code GATEWAY_UNAVAILABLE} when it cannot be reached.
   */
  private void gateway(RoutingContext ctx) {
    String channel = Json.query(ctx, "channel");
    String date = Json.query(ctx, "date");
    if (Json.query(ctx, "apply") != null) {
      throw Rejection.badRequest("this route only reports; missing payments are applied by scripts/reconcile --gateway "
          + "CHANNEL --date YYYY-MM-DD --apply");
    }
    if (channel == null || channel.isBlank()) {
      throw Rejection.badRequest("channel is required (one of " + gateway.channels() + ")");
    }
    LocalDate day;
    try {
      day = LocalDate.parse(date == null ? "" : date);
    } catch (DateTimeParseException e) {
      throw Rejection.badRequest("date is required, as YYYY-MM-DD (the gateway's day)");
    }
    gateway.run(channel, day, false)
        .onSuccess(report -> Json.send(ctx, 200, report.toJson()))
        .onFailure(err -> GatewayErrors.answer(ctx, err, "give its bill"));
  }
}
