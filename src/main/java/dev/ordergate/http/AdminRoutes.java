package dev.ordergate.http;

import dev.ordergate.domain.ExceptionKind;
import dev.ordergate.domain.Rejection;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancelGate;
import dev.ordergate.orders.CatalogService;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/** {@code /admin/*}: bearer-token protected operator endpoints. */
public final class AdminRoutes {

  private static final Set<String> EXCEPTION_STATUSES =
      Set.of("OPEN", "REFUND_PENDING", "REFUNDED", "REFUND_FAILED", "MANUAL_REVIEW", "RESOLVED");
  private static final Set<String> EXCEPTION_KINDS = java.util.Arrays.stream(ExceptionKind.values())
      .map(Enum::name).collect(java.util.stream.Collectors.toUnmodifiableSet());

  private final byte[] token;
  private final CatalogService catalog;
  private final CancelGate cancelGate;
  private final AuthThrottle throttle;

  public AdminRoutes(String token, CatalogService catalog, CancelGate cancelGate, AuthThrottle throttle) {
    this.token = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    this.catalog = catalog;
    this.cancelGate = cancelGate;
    this.throttle = throttle;
  }

  /**
   * The auth step alone, for other admin sub-routers to mount behind it. A client that failed
   * too often is refused before its token is even compared ({@link AuthThrottle}).
   */
  public void authorize(RoutingContext ctx) {
    var remote = ctx.request().remoteAddress();
    String client = AuthThrottle.clientKey(remote == null ? null : remote.hostAddress());
    long wait = throttle.blockedForSeconds(client);
    if (wait > 0) {
      ctx.response().putHeader("Retry-After", Long.toString(wait));
      throw new Rejection(429, "TOO_MANY_FAILED_LOGINS",
          "too many failed admin authentications from this client; retry in " + wait + " s");
    }
    String header = ctx.request().getHeader("Authorization");
    if (header == null || !MessageDigest.isEqual(token, header.getBytes(StandardCharsets.UTF_8))) {
      throw refused(client);
    }
    throttle.success(client);
    ctx.next();
  }

  private Rejection refused(String client) {
    throttle.failure(client);
    return new Rejection(401, "UNAUTHORIZED", "admin endpoints need Authorization: Bearer <admin.token>");
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.route().handler(this::authorize);
    r.put("/inventory/:sku").handler(this::setStock);
    r.post("/coupons").handler(this::createCoupon);
    r.post("/orders/:orderNo/cancel").handler(this::cancel);
    r.get("/exceptions").handler(this::exceptions);
    return r;
  }

  private void setStock(RoutingContext ctx) {
    String sku = Json.pathId(ctx, "sku");
    JsonObject body = Json.body(ctx);
    int available = Json.integer(body, "available", 0, 1_000_000_000L, true).intValue();
    String actor = Json.string(body, "operator", 64, false);
    catalog.setStock(sku, available, actor == null ? "admin" : actor)
        .onSuccess(s -> Json.send(ctx, 200, s)).onFailure(ctx::fail);
  }

  private void createCoupon(RoutingContext ctx) {
    JsonObject body = Json.body(ctx);
    catalog.createCoupon(Json.id(body, "code", true), Json.id(body, "userId", true),
            Json.integer(body, "discountCents", 0, 1_000_000_000L, true))
        .onSuccess(c -> Json.send(ctx, 201, c)).onFailure(ctx::fail);
  }

  private void cancel(RoutingContext ctx) {
    String orderNo = Json.pathId(ctx, "orderNo");
    JsonObject body = Json.body(ctx);
    String operator = Json.string(body, "operator", 64, true);
    String reason = Json.string(body, "reason", 500, false);
    cancelGate.cancel(orderNo, TransitionSource.OPERATOR, operator, reason)
        .onSuccess(result -> OrderRoutes.answerCancel(ctx, result))
        .onFailure(ctx::fail);
  }

  private void exceptions(RoutingContext ctx) {
    String status = Json.query(ctx, "status");
    String kind = Json.query(ctx, "kind");
    if (status != null && !EXCEPTION_STATUSES.contains(status)) {
      throw Rejection.badRequest("status must be one of " + EXCEPTION_STATUSES);
    }
    if (kind != null && !EXCEPTION_KINDS.contains(kind)) {
      throw Rejection.badRequest("kind must be one of " + EXCEPTION_KINDS);
    }
    catalog.exceptions(status, kind, limit(ctx, 100, 1000))
        .onSuccess(list -> Json.send(ctx, 200, list)).onFailure(ctx::fail);
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
