package dev.ordergate.http;

import dev.ordergate.config.AppConfig;
import dev.ordergate.domain.CancelResult;
import dev.ordergate.domain.NewOrder;
import dev.ordergate.domain.Rejection;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancelGate;
import dev.ordergate.orders.CatalogService;
import dev.ordergate.orders.OrderService;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The public API: orders, the customer's cancel, stock and coupon reads. */
public final class OrderRoutes {

  private final OrderService orders;
  private final CatalogService catalog;
  private final CancelGate cancelGate;

  public OrderRoutes(OrderService orders, CatalogService catalog, CancelGate cancelGate) {
    this.orders = orders;
    this.catalog = catalog;
    this.cancelGate = cancelGate;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.post("/orders").handler(this::create);
    r.get("/orders/:orderNo").handler(ctx -> orders.get(Json.pathId(ctx, "orderNo"))
        .onSuccess(o -> Json.send(ctx, 200, o)).onFailure(ctx::fail));
    r.get("/orders/:orderNo/transitions").handler(ctx -> orders.transitions(Json.pathId(ctx, "orderNo"))
        .onSuccess(t -> Json.send(ctx, 200, t)).onFailure(ctx::fail));
    r.post("/orders/:orderNo/cancel").handler(this::cancel);
    r.get("/inventory/:sku").handler(ctx -> catalog.stock(Json.pathId(ctx, "sku"))
        .onSuccess(s -> Json.send(ctx, 200, s)).onFailure(ctx::fail));
    r.get("/coupons/:code").handler(ctx -> catalog.coupon(Json.pathId(ctx, "code"))
        .onSuccess(c -> Json.send(ctx, 200, c)).onFailure(ctx::fail));
    return r;
  }

  private void create(RoutingContext ctx) {
    NewOrder req = parseOrder(Json.body(ctx));
    orders.create(req)
        .onSuccess(created -> Json.send(ctx, created.replayed() ? 200 : 201, created.order()))
        .onFailure(ctx::fail);
  }

  static NewOrder parseOrder(JsonObject body) {
    String orderNo = Json.id(body, "orderNo", false);
    String userId = Json.id(body, "userId", true);
    String coupon = Json.id(body, "couponCode", false);
    Long timeout = Json.integer(body, "paymentTimeoutSeconds", 1, AppConfig.MAX_TIMEOUT_SECONDS, false);
    JsonArray rawItems = Json.array(body, "items", 1, 100);
    List<NewOrder.Item> items = new ArrayList<>();
    Set<String> skus = new HashSet<>();
    for (int i = 0; i < rawItems.size(); i++) {
      if (!(rawItems.getValue(i) instanceof JsonObject item)) {
        throw Rejection.badRequest("items[" + i + "] must be an object");
      }
      String sku = Json.id(item, "sku", true);
      if (!skus.add(sku)) {
        throw Rejection.badRequest("items[" + i + "]: sku " + sku + " is listed twice; give one line per sku");
      }
      int qty = Json.integer(item, "qty", 1, 10_000, true).intValue();
      long price = Json.integer(item, "unitPriceCents", 0, 1_000_000_000L, true);
      items.add(new NewOrder.Item(sku, qty, price));
    }
    return new NewOrder(orderNo, userId, List.copyOf(items), coupon, timeout);
  }

  private void cancel(RoutingContext ctx) {
    String orderNo = Json.pathId(ctx, "orderNo");
    JsonObject body = Json.optionalBody(ctx);
    String actor = Json.id(body, "userId", false);
    String reason = Json.string(body, "reason", 500, false);
    cancelGate.cancel(orderNo, TransitionSource.USER, actor == null ? "customer" : actor, reason)
        .onSuccess(result -> answerCancel(ctx, result))
        .onFailure(ctx::fail);
  }

  /** Shared by the customer's and the operator's cancel: same answers for both. */
  static void answerCancel(RoutingContext ctx, CancelResult result) {
    switch (result.outcome()) {
      case CANCELLED, ALREADY_CANCELLED -> Json.send(ctx, 200, new JsonObject()
          .put("orderNo", result.orderNo()).put("outcome", result.outcome().name())
          .put("status", result.status().name()));
      case ALREADY_PAID -> Json.send(ctx, 409, new JsonObject().put("error", "ALREADY_PAID")
          .put("message", "order " + result.orderNo() + " is paid and cannot be cancelled")
          .put("orderNo", result.orderNo()).put("status", result.status().name()));
      case NOT_FOUND -> ctx.fail(Rejection.notFound("order " + result.orderNo()));
    }
  }
}
