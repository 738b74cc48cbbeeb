package dev.ordergate.http;

import dev.ordergate.auth.AuditLog;
import dev.ordergate.auth.Operator;
import dev.ordergate.domain.Rejection;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancelGate;
import dev.ordergate.orders.CatalogService;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code /admin/*}: operator endpoints behind {@link AdminAuth} (the bearer token or a console
 * session). Every change is recorded in the audit log with the caller's name.
 */
public final class AdminRoutes {

  private final AdminAuth auth;
  private final AuditLog audit;
  private final CatalogService catalog;
  private final CancelGate cancelGate;

  public AdminRoutes(AdminAuth auth, AuditLog audit, CatalogService catalog, CancelGate cancelGate) {
    this.auth = auth;
    this.audit = audit;
    this.catalog = catalog;
    this.cancelGate = cancelGate;
  }

  /** The auth step alone, for other admin sub-routers to mount behind it. */
  public void authorize(RoutingContext ctx) {
    auth.authorize(ctx);
  }

  public AuditLog audit() {
    return audit;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.route().handler(this::authorize);
    r.put("/inventory/:sku").handler(this::setStock);
    r.post("/coupons").handler(this::createCoupon);
    r.post("/orders/:orderNo/cancel").handler(this::cancel);
    return r;
  }

  private void setStock(RoutingContext ctx) {
    String sku = Json.pathId(ctx, "sku");
    JsonObject body = Json.body(ctx);
    int available = Json.integer(body, "available", 0, 1_000_000_000L, true).intValue();
    Operator actor = AdminAuth.actor(ctx, body, false);
    audit.record(actor, "SET_STOCK", "sku " + sku, "available " + available,
            () -> catalog.setStock(sku, available, actor.name()), null)
        .onSuccess(s -> Json.send(ctx, 200, s)).onFailure(ctx::fail);
  }

  private void createCoupon(RoutingContext ctx) {
    JsonObject body = Json.body(ctx);
    String code = Json.id(body, "code", true);
    String userId = Json.id(body, "userId", true);
    long discount = Json.integer(body, "discountCents", 0, 1_000_000_000L, true);
    audit.record(AdminAuth.actor(ctx, body, false), "CREATE_COUPON", "coupon " + code,
            "user " + userId + ", " + discount + " cents", () -> catalog.createCoupon(code, userId, discount), null)
        .onSuccess(c -> Json.send(ctx, 201, c)).onFailure(ctx::fail);
  }

  /** Manual close: the same gate as the customer's cancel; a console session must give a reason. */
  private void cancel(RoutingContext ctx) {
    String orderNo = Json.pathId(ctx, "orderNo");
    JsonObject body = Json.body(ctx);
    Operator operator = AdminAuth.actor(ctx, body, true);
    String reason = Json.string(body, "reason", 500, operator.via() == Operator.Via.SESSION);
    audit.record(operator, "CLOSE_ORDER", "order " + orderNo, reason,
            () -> cancelGate.cancel(orderNo, TransitionSource.OPERATOR, operator.name(), reason),
            result -> result.outcome().name())
        .onSuccess(result -> OrderRoutes.answerCancel(ctx, result))
        .onFailure(ctx::fail);
  }

  static int limit(RoutingContext ctx, int fallback, int max) {
    String raw = Json.query(ctx, "limit");
    if (raw == null) {
      return fallback;
    }
    if (!raw.matches("\\d{1,6}") || Integer.parseInt(raw) < 1 || Integer.parseInt(raw) > max) {
      throw Rejection.badRequest("limit must be between 1 and " + max);
    }
    return Integer.parseInt(raw);
  }
}
