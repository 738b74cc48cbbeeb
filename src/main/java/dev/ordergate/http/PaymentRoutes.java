package dev.ordergate.http;

import dev.ordergate.payment.PaymentAttempts;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * Payment attempts: {@code POST /orders/{orderNo}/payments {"channel"}} opens the payment at the
 * channel's gateway (201; a repeat answers the same attempt with 200) and answers what the customer's
 * app needs ({@code code_url}, {@code qr_code} or {@code client_secret}); {@code GET} lists the order's
 * attempts. A gateway's error answer is 502 {@code GATEWAY_ERROR} with its code in {@code gatewayCode};
 * a gateway that cannot be reached is 503 {@code GATEWAY_UNAVAILABLE}. Nothing is stored in either case.
 */
public final class PaymentRoutes {

  private final PaymentAttempts attempts;

  public PaymentRoutes(PaymentAttempts attempts) {
    this.attempts = attempts;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.post("/orders/:orderNo/payments").handler(this::open);
    r.get("/orders/:orderNo/payments").handler(ctx -> attempts.list(Json.pathId(ctx, "orderNo"))
        .onSuccess(list -> Json.send(ctx, 200, new JsonObject().put("orderNo", ctx.pathParam("orderNo"))
            .put("attempts", list)))
        .onFailure(ctx::fail));
    return r;
  }

  private void open(RoutingContext ctx) {
    String orderNo = Json.pathId(ctx, "orderNo");
    String channel = Json.id(Json.body(ctx), "channel", true);
    attempts.open(orderNo, channel)
        .onSuccess(opened -> Json.send(ctx, opened.replayed() ? 200 : 201, opened.attempt().toJson(true)
            .put("replayed", opened.replayed())))
        .onFailure(err -> GatewayErrors.answer(ctx, err, "open the payment"));
  }
}
