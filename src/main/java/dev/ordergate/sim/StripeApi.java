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
 * {@code payment_intent_unexpected_state}; an unknown id is 404 {@code resource_missing}. Checkout Sessions
 * under {@code /stripe/v1/checkout/sessions}: create, retrieve ({@code expand[]=payment_intent}), expire.
 */
public final class StripeApi extends SimApi {

  private final String secretKey;
  private final Map<String, String> idempotency = new ConcurrentHashMap<>();
  /** A Checkout Session's {@code payment_intent_data[metadata][orderNo]}: what its PaymentIntent carries. */
  private final Map<String, String> intentOrder = new ConcurrentHashMap<>();

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
    r.post("/stripe/v1/checkout/sessions").handler(ctx -> guarded(ctx, "open", () -> createSession(ctx)));
    r.get("/stripe/v1/checkout/sessions/:id").handler(ctx -> guarded(ctx, "query", () -> retrieveSession(ctx)));
    r.post("/stripe/v1/checkout/sessions/:id/expire").handler(ctx -> guarded(ctx, "close", () -> expireSession(ctx)));
  }

  private boolean authorized(RoutingContext ctx) {
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
    String id = idempotent(ctx, () -> "pi_sim" + WechatPayGateway.random(10).toLowerCase());
    TradeBook.Trade t = trades.create(kind(), id, orderNo, amount,
        form.getOrDefault("currency", "cny").toUpperCase(Locale.ROOT), null, null,
        id + "_secret_" + WechatPayGateway.random(8).toLowerCase(), TradeBook.State.OPEN);
    send(ctx, 200, intent(t));
  }

  /** The id the request's {@code Idempotency-Key} already created, else a new one (remembered under the key). */
  private String idempotent(RoutingContext ctx, java.util.function.Supplier<String> newId) {
    String key = ctx.request().getHeader("Idempotency-Key");
    if (key == null) {
      return newId.get();
    }
    String known = idempotency.get(key);
    if (known != null) {
      return known;
    }
    String id = newId.get();
    String raced = idempotency.putIfAbsent(key, id);
    return raced == null ? id : raced;
  }

  /** The authorized request's PaymentIntent; null (answered) when unauthorized or unknown. */
  private TradeBook.Trade found(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return null;
    }
    TradeBook.Trade t = ctx.pathParam("id").startsWith("cs_") ? null : trades.get(kind(), ctx.pathParam("id"));
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

  private static JsonObject intent(TradeBook.Trade t) {
    // A Checkout Session's payment is its PaymentIntent's (the Session itself is no intent).
    String id = t.ref.startsWith("cs_") ? sessionIntent(t.ref) : t.ref;
    return new JsonObject().put("id", id).put("object", "payment_intent").put("amount", t.amountCents)
        .put("amount_received", t.state == TradeBook.State.PAID ? t.amountCents : 0)
        .put("currency", t.currency.toLowerCase(Locale.ROOT)).put("status", status(t))
        .put("client_secret", t.clientValue).put("metadata", new JsonObject().put("orderNo", t.orderNo));
  }

  // ---- Checkout Sessions ----------------------------------------------------------------------

  /** The PaymentIntent of Checkout Session {@code sessionId}: the txn its payment is known by. */
  public static String sessionIntent(String sessionId) {
    return "pi_" + sessionId.substring(3);
  }

  /**
   * {@code POST /v1/checkout/sessions}: mode payment, one {@code price_data} line, {@code expires_at}
   * between 30 minutes and 24 hours from now (Stripe's bounds; the error's code is the simulator's guess),
   * the order number from {@code metadata[orderNo]} (else {@code client_reference_id}). The Session is a trade
   * with {@code expires_at} as its deadline: open, complete (paid through its PaymentIntent) or expired.
   */
  private void createSession(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    Map<String, String> form = AlipayApi.form(ctx.body().asString(StandardCharsets.UTF_8.name()));
    if (!"payment".equals(form.get("mode"))) {
      error(ctx, 400, "invalid_request_error", "parameter_missing", "mode must be payment here");
      return;
    }
    long amount;
    long expiresAt;
    try {
      amount = Long.parseLong(form.getOrDefault("line_items[0][price_data][unit_amount]", ""))
          * Long.parseLong(form.getOrDefault("line_items[0][quantity]", "1"));
      expiresAt = Long.parseLong(form.getOrDefault("expires_at", ""));
    } catch (NumberFormatException e) {
      error(ctx, 400, "invalid_request_error", "parameter_invalid_integer", "unit_amount, quantity and expires_at are integers");
      return;
    }
    long now = trades.now().getEpochSecond();
    if (expiresAt < now + 30 * 60 || expiresAt > now + 24 * 3600) {
      error(ctx, 400, "invalid_request_error", "parameter_invalid_integer",
          "expires_at must be between 30 minutes and 24 hours after the Checkout Session's creation");
      return;
    }
    String orderNo = form.getOrDefault("metadata[orderNo]", form.get("client_reference_id"));
    String id = idempotent(ctx, () -> "cs_sim_" + WechatPayGateway.random(16).toLowerCase());
    TradeBook.Trade t = trades.create(kind(), id, orderNo, amount,
        form.getOrDefault("line_items[0][price_data][currency]", "cny").toUpperCase(Locale.ROOT),
        java.time.Instant.ofEpochSecond(expiresAt), null, "https://checkout.stripe.com/c/pay/" + id, TradeBook.State.OPEN);
    String intentOrderNo = form.get("payment_intent_data[metadata][orderNo]");
    if (intentOrderNo != null) {
      intentOrder.putIfAbsent(id, intentOrderNo);
    }
    send(ctx, 200, session(t, false));
  }

  private TradeBook.Trade foundSession(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return null;
    }
    TradeBook.Trade t = ctx.pathParam("id").startsWith("cs_") ? trades.get(kind(), ctx.pathParam("id")) : null;
    if (t == null) {
      error(ctx, 404, "invalid_request_error", "resource_missing", "No such checkout.session");
    }
    return t;
  }

  private void retrieveSession(RoutingContext ctx) {
    TradeBook.Trade t = foundSession(ctx);
    if (t != null) {
      send(ctx, 200, session(t, ctx.queryParam("expand[]").contains("payment_intent")));
    }
  }

  /** Only an {@code open} Session can be expired; complete (paid) or expired ones answer 400. */
  private void expireSession(RoutingContext ctx) {
    TradeBook.Trade t = foundSession(ctx);
    if (t == null) {
      return;
    }
    if (t.state != TradeBook.State.OPEN) {
      error(ctx, 400, "invalid_request_error", null,
          "Only Checkout Sessions with a status of open can be expired; this one is " + sessionStatus(t));
      return;
    }
    send(ctx, 200, session(trades.close(kind(), t.ref), false));
  }

  private static String sessionStatus(TradeBook.Trade t) {
    return switch (t.state) {
      case PAID -> "complete";
      case CLOSED -> "expired";
      default -> "open";
    };
  }

  private JsonObject session(TradeBook.Trade t, boolean expandIntent) {
    String pi = sessionIntent(t.ref);
    Object intent = t.state != TradeBook.State.PAID ? null : expandIntent
        ? new JsonObject().put("id", pi).put("object", "payment_intent").put("status", "succeeded")
            .put("amount", t.amountCents).put("amount_received", t.amountCents)
            .put("currency", t.currency.toLowerCase(Locale.ROOT)).put("metadata", intentOrder.containsKey(t.ref) ? new JsonObject().put("orderNo", intentOrder.get(t.ref)) : new JsonObject())
        : pi;
    return new JsonObject().put("id", t.ref).put("object", "checkout.session").put("mode", "payment")
        .put("status", sessionStatus(t)).put("payment_status", t.state == TradeBook.State.PAID ? "paid" : "unpaid")
        .put("amount_total", t.amountCents).put("currency", t.currency.toLowerCase(Locale.ROOT))
        .put("client_reference_id", t.orderNo).put("metadata", new JsonObject().put("orderNo", t.orderNo))
        .put("expires_at", t.deadline.getEpochSecond()).put("url", t.state == TradeBook.State.OPEN ? t.clientValue : null)
        .put("payment_intent", intent);
  }

  private static void error(RoutingContext ctx, int status, String type, String code, String message) {
    JsonObject err = new JsonObject().put("type", type).put("message", message);
    if (code != null) {
      err.put("code", code);
    }
    send(ctx, status, new JsonObject().put("error", err));
  }

  private static void send(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(body.encode());
  }
}
