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
 * {@code payment_intent_unexpected_state}; an unknown id is 404 {@code resource_missing}. Refunds
 * ({@code POST /v1/refunds}, list by payment_intent): only of a succeeded intent, never above its amount;
 * an {@code Idempotency-Key} replays the first answer (another body with the same key is 400
 * {@code idempotency_error}); a settled refund sends {@code charge.refunded} (succeeded) and, when it was
 * pending, {@code refund.updated}, signed with the webhook secret.
 * Checkout Sessions under {@code /stripe/v1/checkout/sessions}: create, retrieve
 * ({@code expand[]=payment_intent}), expire.
 */
public final class StripeApi extends SimApi {

  private final String secretKey;
  private final StripeGateway gateway;
  private final Map<String, String> idempotency = new ConcurrentHashMap<>();
  /** A Checkout Session's {@code payment_intent_data[metadata][orderNo]}: what its PaymentIntent carries. */
  private final Map<String, String> intentOrder = new ConcurrentHashMap<>();
  /** Refund requests by Idempotency-Key: the request body and the first answer, replayed. */
  private final Map<String, String[]> refundAnswers = new ConcurrentHashMap<>();

  StripeApi(Vertx vertx, TradeBook trades, Faults faults, String secretKey, StripeGateway gateway) {
    super(vertx, trades, faults);
    this.secretKey = secretKey;
    this.gateway = gateway;
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
    r.post("/stripe/v1/refunds").handler(ctx -> guarded(ctx, "refund", () -> refund(ctx)));
    r.get("/stripe/v1/refunds").handler(ctx -> guarded(ctx, "refund_query", () -> listRefunds(ctx)));
  }

  private void refund(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    String body = ctx.body().asString(StandardCharsets.UTF_8.name());
    String key = ctx.request().getHeader("Idempotency-Key");
    String[] before = key == null ? null : refundAnswers.get(key);
    if (before != null) {
      if (!before[0].equals(body)) {
        error(ctx, 400, "idempotency_error", "idempotency_key_in_use",
            "Keys for idempotent requests can only be used with the same parameters they were first used with.");
      } else {
        ctx.response().setStatusCode(Integer.parseInt(before[1])).putHeader("Content-Type", "application/json")
            .putHeader("Idempotent-Replayed", "true").end(before[2]);
      }
      return;
    }
    Map<String, String> form = AlipayApi.form(body);
    String pi = form.get("payment_intent");
    TradeBook.Trade t = pi == null ? null : trades.get(kind(), pi);
    long amount;
    try {
      amount = form.get("amount") == null ? (t == null ? 0 : t.amountCents) : Long.parseLong(form.get("amount"));
    } catch (NumberFormatException e) {
      error(ctx, 400, "invalid_request_error", "parameter_invalid_integer", "amount must be an integer");
      return;
    }
    String refundId = key != null ? key : "req_" + WechatPayGateway.random(8);
    TradeBook.RefundResult result = trades.refund(kind(), t, refundId, amount,
        "re_sim" + WechatPayGateway.random(10).toLowerCase(), null);
    int status;
    JsonObject answer;
    if (result.refusal() == null) {
      status = 200;
      answer = refundObject(result.refund(), form);
    } else {
      status = result.refusal() == TradeBook.RefundRefusal.UNKNOWN_TRADE ? 404 : 400;
      answer = switch (result.refusal()) {
        case UNKNOWN_TRADE -> stripeError("invalid_request_error", "resource_missing",
            "No such payment_intent: '" + pi + "'").put("param", "payment_intent");
        case NOT_PAID -> stripeError("invalid_request_error", null,
            "This PaymentIntent (" + pi + ") does not have a successful charge to refund.");
        case EXCEEDS_AMOUNT -> stripeError("invalid_request_error", "charge_already_refunded",
            "Charge for " + pi + " has already been refunded.");
        case REFUND_ID_REUSED -> stripeError("idempotency_error", "idempotency_key_in_use",
            "Keys for idempotent requests can only be used with the same parameters they were first used with.");
      };
      answer = new JsonObject().put("error", answer);
    }
    if (key != null) {
      refundAnswers.putIfAbsent(key, new String[] {body, Integer.toString(status), answer.encode()});
    }
    send(ctx, status, answer);
    if (result.refusal() == null && result.refund().state != TradeBook.RefundState.PENDING) {
      settled(result.refund());
    }
  }

  private void listRefunds(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    String pi = ctx.request().getParam("payment_intent");
    io.vertx.core.json.JsonArray data = new io.vertx.core.json.JsonArray();
    trades.refunds(kind()).stream().filter(r -> pi == null || r.tradeRef.equals(pi))
        .forEach(r -> data.add(refundObject(r, Map.of())));
    send(ctx, 200, new JsonObject().put("object", "list").put("data", data).put("has_more", false).put("url", "/v1/refunds"));
  }

  /** Metadata given at creation are kept per refund id (the sim keeps no other copy): refundId and orderNo. */
  private final Map<String, JsonObject> refundMetadata = new ConcurrentHashMap<>();

  JsonObject refundObject(TradeBook.Refund r, Map<String, String> form) {
    JsonObject metadata = refundMetadata.computeIfAbsent(r.refundId, id -> {
      JsonObject m = new JsonObject();
      form.forEach((k, v) -> {
        if (k.startsWith("metadata[") && k.endsWith("]")) {
          m.put(k.substring(9, k.length() - 1), v);
        }
      });
      return m;
    });
    return new JsonObject().put("id", r.gatewayRefundId).put("object", "refund").put("amount", r.amountCents)
        .put("charge", "ch_" + r.tradeRef.substring(3)).put("created", r.createdAt.getEpochSecond())
        .put("currency", r.currency.toLowerCase(Locale.ROOT)).put("metadata", metadata)
        .put("payment_intent", r.tradeRef).put("reason", form.getOrDefault("reason", null))
        .put("status", switch (r.state) {
          case SUCCEEDED -> "succeeded";
          case PENDING -> "pending";
          case FAILED -> "failed";
        });
  }

  @Override
  void settled(TradeBook.Refund r) {
    long now = System.currentTimeMillis() / 1000;
    JsonObject refund = refundObject(r, Map.of());
    if (!r.createdAt.equals(r.settledAt)) {
      notifier.send(kind(), null, gateway.notification(StripeGateway.event("refund.updated", refund, now), now));
    }
    if (r.state == TradeBook.RefundState.SUCCEEDED) {
      long refunded = trades.refunds(kind()).stream().filter(x -> x.tradeRef.equals(r.tradeRef)
          && x.state == TradeBook.RefundState.SUCCEEDED).mapToLong(x -> x.amountCents).sum();
      TradeBook.Trade t = trades.get(kind(), r.tradeRef);
      JsonObject charge = new JsonObject().put("id", refund.getString("charge")).put("object", "charge")
          .put("amount", t.amountCents).put("amount_refunded", refunded).put("refunded", refunded >= t.amountCents)
          .put("currency", refund.getString("currency")).put("payment_intent", r.tradeRef).put("paid", true)
          .put("status", "succeeded").put("metadata", new JsonObject().put("orderNo", t.orderNo));
      notifier.send(kind(), null, gateway.notification(StripeGateway.event("charge.refunded", charge, now), now));
    }
  }

  private static JsonObject stripeError(String type, String code, String message) {
    JsonObject e = new JsonObject().put("type", type).put("message", message);
    if (code != null) {
      e.put("code", code);
    }
    return e;
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

  static JsonObject intent(TradeBook.Trade t) {
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

  static void error(RoutingContext ctx, int status, String type, String code, String message) {
    JsonObject err = new JsonObject().put("type", type).put("message", message);
    if (code != null) {
      err.put("code", code);
    }
    send(ctx, status, new JsonObject().put("error", err));
  }

  static void send(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(body.encode());
  }
}
