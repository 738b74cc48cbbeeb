package dev.ordergate.sim;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Stripe's PaymentIntents under {@code /stripe/v1}: create (form-encoded, {@code Idempotency-Key} replays
 * the first intent), retrieve, cancel. Bearer (or Basic) auth with the secret key. A PaymentIntent has no
 * deadline: it stays payable until cancelled; cancelling a succeeded one is 400
 * {@code payment_intent_unexpected_state}; an unknown id is 404 {@code resource_missing}.
 */
final class StripeApi extends SimApi {

  private final String secretKey;
  private final Map<String, String> idempotency = new ConcurrentHashMap<>();

  StripeApi(Vertx vertx, TradeBook trades, Faults faults, String secretKey) {
    super(vertx, trades, faults);
    this.secretKey = secretKey;
  }

  @Override
  String kind() {
    return "stripe";
  }

  void mount(Router r) {
    r.post("/stripe/v1/payment_intents").handler(ctx -> guarded(ctx, "open", () -> create(ctx)));
    r.get("/stripe/v1/payment_intents/:id").handler(ctx -> guarded(ctx, "query", () -> retrieve(ctx)));
    r.post("/stripe/v1/payment_intents/:id/cancel").handler(ctx -> guarded(ctx, "close", () -> cancel(ctx)));
  }

  boolean authorized(RoutingContext ctx) {
    String auth = ctx.request().getHeader("Authorization");
    String basic = "Basic " + java.util.Base64.getEncoder().encodeToString((secretKey + ":").getBytes(StandardCharsets.UTF_8));
    boolean ok = secretKey != null && (("Bearer " + secretKey).equals(auth) || basic.equals(auth));
    if (!ok) {
      error(ctx, 401, "authentication_error", "api_key_invalid", "Invalid API Key provided");
    }
    return ok;
  }

  private void create(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    Map<String, String> form = AlipayApi.form(ctx.body().asString(StandardCharsets.UTF_8.name()));
    String orderNo = form.get("metadata[orderNo]");
    long amount;
    try {
      amount = Long.parseLong(form.getOrDefault("amount", ""));
    } catch (NumberFormatException e) {
      error(ctx, 400, "invalid_request_error", "parameter_invalid_integer", "amount must be an integer");
      return;
    }
    String key = ctx.request().getHeader("Idempotency-Key");
    String id = key == null ? null : idempotency.get(key);
    if (id == null) {
      id = "pi_sim" + WechatPayGateway.random(10).toLowerCase();
      if (key != null) {
        String raced = idempotency.putIfAbsent(key, id);
        id = raced == null ? id : raced;
      }
    }
    TradeBook.Trade t = trades.create(kind(), id, orderNo, amount,
        form.getOrDefault("currency", "cny").toUpperCase(Locale.ROOT), null, null,
        id + "_secret_" + WechatPayGateway.random(8).toLowerCase(), TradeBook.State.OPEN);
    send(ctx, 200, intent(t));
  }

  /** The authorized request's PaymentIntent; null (answered) when unauthorized or unknown. */
  private TradeBook.Trade found(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return null;
    }
    TradeBook.Trade t = trades.get(kind(), ctx.pathParam("id"));
    if (t == null) {
      error(ctx, 404, "invalid_request_error", "resource_missing", "No such payment_intent");
    }
    return t;
  }

  private void retrieve(RoutingContext ctx) {
    TradeBook.Trade t = found(ctx);
    if (t != null) {
      send(ctx, 200, intent(t));
    }
  }

  private void cancel(RoutingContext ctx) {
    TradeBook.Trade t = found(ctx);
    if (t == null) {
      return;
    }
    if (t.state != TradeBook.State.OPEN) {
      error(ctx, 400, "invalid_request_error", "payment_intent_unexpected_state",
          "This PaymentIntent's status is " + status(t) + "; it cannot be canceled");
      return;
    }
    send(ctx, 200, intent(trades.close(kind(), t.ref)));
  }

  private static String status(TradeBook.Trade t) {
    return switch (t.state) {
      case PAID -> "succeeded";
      case CLOSED -> "canceled";
      default -> "requires_payment_method";
    };
  }

  static JsonObject intent(TradeBook.Trade t) {
    return new JsonObject().put("id", t.ref).put("object", "payment_intent").put("amount", t.amountCents)
        .put("amount_received", t.state == TradeBook.State.PAID ? t.amountCents : 0)
        .put("currency", t.currency.toLowerCase(Locale.ROOT)).put("status", status(t))
        .put("client_secret", t.clientValue).put("metadata", new JsonObject().put("orderNo", t.orderNo));
  }

  static void error(RoutingContext ctx, int status, String type, String code, String message) {
    send(ctx, status, new JsonObject().put("error", new JsonObject().put("type", type).put("code", code).put("message", message)));
  }

  static void send(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(body.encode());
  }
}
