package dev.ordergate.http;

import dev.ordergate.auth.AuditLog;
import dev.ordergate.console.OrderRecords;
import dev.ordergate.console.Overview;
import dev.ordergate.domain.Rejection;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * The reads the console adds to {@code /admin}: {@code GET /summary} (the overview),
 * {@code GET /orders?txnId=} and {@code GET /orders/{orderNo}} (the whole record), and
 * {@code GET /audit} (filters operator, action, result, from, to). Lists page by key ({@link Page}).
 */
public final class ConsoleApiRoutes {

  private final OrderRecords records;
  private final Overview overview;
  private final AuditLog audit;

  public ConsoleApiRoutes(OrderRecords records, Overview overview, AuditLog audit) {
    this.records = records;
    this.overview = overview;
    this.audit = audit;
  }

  public Router router(Vertx vertx, Handler<RoutingContext> authorize) {
    Router r = Router.router(vertx);
    r.get("/summary").handler(authorize).handler(ctx -> overview.summary()
        .onSuccess(s -> Json.send(ctx, 200, s)).onFailure(ctx::fail));
    r.get("/orders").handler(authorize).handler(this::ordersByTxn);
    r.get("/orders/:orderNo").handler(authorize).handler(ctx -> records.record(Json.pathId(ctx, "orderNo"))
        .onSuccess(o -> Json.send(ctx, 200, o)).onFailure(ctx::fail));
    r.get("/audit").handler(authorize).handler(this::audit);
    return r;
  }

  private void ordersByTxn(RoutingContext ctx) {
    String txnId = ctx.queryParams().get("txnId");
    if (txnId == null || !txnId.matches("[A-Za-z0-9._:-]{1,64}")) {
      throw Rejection.badRequest("txnId is required (letters, digits and . _ : -); read one order at /admin/orders/{orderNo}");
    }
    int limit = AdminRoutes.limit(ctx, 100, 1000);
    records.byTxnId(txnId, Page.after(ctx, "orders"), limit + 1)
        .onSuccess(rows -> Page.send(ctx, "orders", rows, limit, row -> row.getString("orderNo")))
        .onFailure(ctx::fail);
  }

  private void audit(RoutingContext ctx) {
    String operator = text(ctx, "operator");
    String action = text(ctx, "action");
    String result = text(ctx, "result");
    int limit = AdminRoutes.limit(ctx, 100, 1000);
    AuditLog.Filter filter = new AuditLog.Filter(operator, action, result, Page.time(ctx, "from"), Page.time(ctx, "to"));
    audit.page(filter, Page.afterId(ctx, "audit"), limit + 1)
        .onSuccess(rows -> Page.send(ctx, "audit", rows, limit, row -> row.getLong("id")))
        .onFailure(ctx::fail);
  }

  private static String text(RoutingContext ctx, String param) {
    String v = ctx.queryParams().get(param);
    if (v == null || v.isEmpty()) {
      return null;
    }
    if (v.length() > 64) {
      throw Rejection.badRequest(param + " must be at most 64 characters");
    }
    return v;
  }
}
