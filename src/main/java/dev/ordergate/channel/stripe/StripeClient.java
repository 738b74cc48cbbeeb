package dev.ordergate.channel.stripe;

import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Outbound;
import dev.ordergate.config.ChannelConfig;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Stripe, outbound: a PaymentIntent (form-encoded, {@code metadata[orderNo]} as the webhook reads it,
 * an {@code Idempotency-Key} per order and channel so a repeated open is the same intent), retrieved for
 * a query and cancelled ({@code cancellation_reason=abandoned}) to close it: a PaymentIntent has no
 * deadline of its own, so we cancel it at timeout. Authorization: Bearer with the secret key. Refunds:
 * {@code POST /v1/refunds} (payment_intent, amount, metadata[refundId], metadata[orderNo]) with
 * {@code Idempotency-Key} = our refund id: a retry replays the first answer, so the query lists the
 * intent's refunds ({@code GET /v1/refunds?payment_intent=}) and picks ours by metadata[refundId].
 */
public final class StripeClient implements GatewayClient {

  /** Refusals that pass (rate limit, a lock or idempotency conflict with a request in flight): retried. */
  static final java.util.Set<String> RETRYABLE = java.util.Set.of("rate_limit", "lock_timeout", "idempotency_error");

  private final ChannelConfig config;
  private final StripeSettings settings;
  private final Outbound outbound;
  private final Clock clock;

  public StripeClient(ChannelConfig config, Outbound outbound) {
    this(config, outbound, Clock.systemUTC());
  }

  public StripeClient(ChannelConfig config, Outbound outbound, Clock clock) {
    this.clock = clock;
    this.config = config;
    this.settings = (StripeSettings) config.settings();
    this.outbound = outbound;
    if (settings.secretKey() == null) {
      throw new IllegalArgumentException("channel " + config.name() + " needs secretKey to open payments");
    }
  }

  @Override
  public Future<Opened> open(OpenRequest r) {
    if (checkoutFits(r.expiresAt())) {
      return openSession(r);
    }
    Map<String, String> form = new LinkedHashMap<>();
    form.put("amount", Long.toString(r.amountCents()));
    form.put("currency", r.currency().toLowerCase(Locale.ROOT));
    form.put("description", r.description());
    form.put("metadata[orderNo]", r.orderNo());
    form.put("automatic_payment_methods[enabled]", "true");
    return outbound.call(config.name(), "open", () -> send(HttpMethod.POST, "/v1/payment_intents", form,
        "ordergate-open-" + config.name() + "-" + r.orderNo()).map(resp -> {
          JsonObject pi = answer(resp);
          if (resp.statusCode() != 200 || !(pi.getValue("id") instanceof String id)
              || !(pi.getValue("client_secret") instanceof String secret)) {
            throw error(resp, pi);
          }
          return new Opened(id, "client_secret", secret);
        }));
  }

  @Override
  public Future<Trade> query(String reference, String orderNo) {
    if (isSession(reference)) {
      return querySession(reference);
    }
    return outbound.call(config.name(), "query", () -> send(HttpMethod.GET, "/v1/payment_intents/" + encode(reference),
        null, null).map(resp -> {
          JsonObject pi = answer(resp);
          if (resp.statusCode() == 404) {
            return Trade.of(TradeState.NOT_FOUND, "resource_missing");
          }
          if (resp.statusCode() != 200 || !(pi.getValue("status") instanceof String status)) {
            throw error(resp, pi);
          }
          return switch (status) {
            case "succeeded" -> new Trade(TradeState.PAID, reference,
                pi.getValue("amount_received") instanceof Number n ? n.longValue() : 0,
                pi.getValue("currency") instanceof String c ? c.toUpperCase(Locale.ROOT) : null, status);
            case "canceled" -> Trade.of(TradeState.CLOSED, status);
            default -> Trade.of(TradeState.OPEN, status);
          };
        }));
  }

  @Override
  public Future<Void> close(String reference, String orderNo) {
    if (isSession(reference)) {
      return expireSession(reference);
    }
    return outbound.call(config.name(), "close", () -> send(HttpMethod.POST,
        "/v1/payment_intents/" + encode(reference) + "/cancel", Map.of("cancellation_reason", "abandoned"), null)
        .map(resp -> {
          JsonObject pi = answer(resp);
          if (resp.statusCode() == 200) {
            return (Void) null;
          }
          throw error(resp, pi);
        }));
  }

  // ---- Checkout Sessions (issue 10) -----------------------------------------------------------

  /** Stripe's bounds on a Session's {@code expires_at}: 30 minutes to 24 hours after its creation. */
  public static final Duration CHECKOUT_MIN_WINDOW = Duration.ofMinutes(30);
  public static final Duration CHECKOUT_MAX_WINDOW = Duration.ofHours(24);
  /** Kept off both bounds: the request's travel time and the clocks' skew must not push it outside. */
  public static final Duration CHECKOUT_MARGIN = Duration.ofSeconds(60);

  /**
   * True when this channel opens a Checkout Session for an order expiring at {@code expiresAt}: a
   * {@code checkoutSuccessUrl} is configured and the remaining window fits Stripe's bounds with the margin.
   */
  public boolean checkoutFits(Instant expiresAt) {
    if (settings.checkoutSuccessUrl() == null) {
      return false;
    }
    Duration left = Duration.between(clock.instant(), expiresAt);
    return left.compareTo(CHECKOUT_MIN_WINDOW.plus(CHECKOUT_MARGIN)) >= 0
        && left.compareTo(CHECKOUT_MAX_WINDOW.minus(CHECKOUT_MARGIN)) <= 0;
  }

  /** A Checkout Session id ({@code cs_...}); every other reference is a PaymentIntent. */
  public static boolean isSession(String reference) {
    return reference.startsWith("cs_");
  }

  /**
   * {@code POST /v1/checkout/sessions}, mode payment, one line of the order's amount, {@code expires_at} =
   * the order's expiry (the Session's own deadline), the order number in {@code client_reference_id},
   * {@code metadata[orderNo]} and {@code payment_intent_data[metadata][orderNo]} (so both webhooks,
   * {@code checkout.session.completed} and {@code payment_intent.succeeded}, name the order). The client gets
   * the hosted page's {@code url}.
   */
  private Future<Opened> openSession(OpenRequest r) {
    Map<String, String> form = new LinkedHashMap<>();
    form.put("mode", "payment");
    form.put("line_items[0][price_data][currency]", r.currency().toLowerCase(Locale.ROOT));
    form.put("line_items[0][price_data][unit_amount]", Long.toString(r.amountCents()));
    form.put("line_items[0][price_data][product_data][name]", r.description());
    form.put("line_items[0][quantity]", "1");
    form.put("expires_at", Long.toString(r.expiresAt().getEpochSecond()));
    form.put("client_reference_id", r.orderNo());
    form.put("metadata[orderNo]", r.orderNo());
    form.put("payment_intent_data[metadata][orderNo]", r.orderNo());
    form.put("success_url", settings.checkoutSuccessUrl());
    return outbound.call(config.name(), "open", () -> send(HttpMethod.POST, "/v1/checkout/sessions", form,
        "ordergate-checkout-" + config.name() + "-" + r.orderNo()).map(resp -> {
          JsonObject cs = answer(resp);
          if (resp.statusCode() != 200 || !(cs.getValue("id") instanceof String id) || !isSession(id)
              || !(cs.getValue("url") instanceof String url)) {
            throw error(resp, cs);
          }
          return new Opened(id, "url", url);
        }));
  }

  /**
   * {@code GET /v1/checkout/sessions/{id}?expand[]=payment_intent}: {@code complete} and {@code paid} is a
   * payment whose txn is the Session's PaymentIntent (the id both webhooks carry); {@code expired} is closed;
   * {@code open}, or complete but unpaid (a delayed method), is still open.
   */
  private Future<Trade> querySession(String reference) {
    return outbound.call(config.name(), "query", () -> send(HttpMethod.GET, "/v1/checkout/sessions/"
        + encode(reference) + "?expand%5B%5D=payment_intent", null, null).map(resp -> {
          JsonObject cs = answer(resp);
          if (resp.statusCode() == 404) {
            return Trade.of(TradeState.NOT_FOUND, "resource_missing");
          }
          if (resp.statusCode() != 200 || !(cs.getValue("status") instanceof String status)) {
            throw error(resp, cs);
          }
          String paymentStatus = cs.getValue("payment_status") instanceof String p ? p : "unpaid";
          Object pi = cs.getValue("payment_intent");
          String intent = pi instanceof JsonObject o && o.getValue("id") instanceof String i ? i
              : pi instanceof String i ? i : null;
          String word = status + "/" + paymentStatus;
          if ("complete".equals(status) && "paid".equals(paymentStatus) && intent != null) {
            return new Trade(TradeState.PAID, intent,
                cs.getValue("amount_total") instanceof Number n ? n.longValue() : 0,
                cs.getValue("currency") instanceof String c ? c.toUpperCase(Locale.ROOT) : null, word);
          }
          return switch (status) {
            case "expired" -> Trade.of(TradeState.CLOSED, word);
            default -> Trade.of(TradeState.OPEN, word);
          };
        }));
  }

  /**
   * {@code POST /v1/checkout/sessions/{id}/expire}: a Session that is not {@code open} (complete: paid, or
   * already expired) answers an error, which the caller's query then explains.
   */
  private Future<Void> expireSession(String reference) {
    return outbound.call(config.name(), "close", () -> send(HttpMethod.POST,
        "/v1/checkout/sessions/" + encode(reference) + "/expire", Map.of(), null).map(resp -> {
          JsonObject cs = answer(resp);
          if (resp.statusCode() == 200) {
            return (Void) null;
          }
          throw error(resp, cs);
        }));
  }

  @Override
  public Future<Refund> refund(RefundRequest r) {
    Map<String, String> form = new LinkedHashMap<>();
    form.put("payment_intent", r.txnId());
    form.put("amount", Long.toString(r.amountCents()));
    form.put("reason", "DOUBLE_PAYMENT".equals(r.reason()) ? "duplicate" : "requested_by_customer");
    form.put("metadata[refundId]", r.refundId());
    form.put("metadata[orderNo]", r.orderNo());
    return outbound.call(config.name(), "refund", () -> send(HttpMethod.POST, "/v1/refunds", form, r.refundId())
        .map(resp -> {
          JsonObject refund = answer(resp);
          if (resp.statusCode() == 200 && "refund".equals(refund.getValue("object"))) {
            return refund(refund);
          }
          throw refundError(resp, refund);
        }));
  }

  @Override
  public Future<Refund> queryRefund(RefundRequest r) {
    return outbound.call(config.name(), "refund_query", () -> send(HttpMethod.GET,
        "/v1/refunds?limit=100&payment_intent=" + encode(r.txnId()), null, null).map(resp -> {
          JsonObject list = answer(resp);
          if (resp.statusCode() != 200 || !(list.getValue("data") instanceof io.vertx.core.json.JsonArray data)) {
            throw refundError(resp, list);
          }
          for (Object o : data) {
            if (o instanceof JsonObject refund && refund.getValue("metadata") instanceof JsonObject m
                && r.refundId().equals(m.getValue("refundId"))) {
              return refund(refund);
            }
          }
          throw GatewayFailure.answered(config.name(), "resource_missing", "no refund with metadata[refundId] " + r.refundId());
        }));
  }

  /** A Refund object: succeeded; pending or requires_action (still to come); failed or canceled. */
  public static Refund refund(JsonObject refund) {
    String status = refund.getValue("status") instanceof String s ? s : "unknown";
    String id = refund.getValue("id") instanceof String s ? s : null;
    return switch (status) {
      case "succeeded" -> new Refund(RefundState.REFUNDED, id, status);
      case "failed", "canceled" -> new Refund(RefundState.FAILED, id, status);
      default -> new Refund(RefundState.PENDING, id, status);
    };
  }

  private GatewayFailure refundError(HttpResponse<Buffer> resp, JsonObject body) {
    GatewayFailure e = error(resp, body);
    return resp.statusCode() == 429 || resp.statusCode() == 409 || RETRYABLE.contains(e.code())
        ? GatewayFailure.unreachable(config.name(), e.code(), e.getMessage()) : e;
  }

  private Future<HttpResponse<Buffer>> send(HttpMethod method, String path, Map<String, String> form, String idempotencyKey) {
    var req = outbound.request(method, settings.baseUrl() + path).bearerTokenAuthentication(settings.secretKey());
    if (idempotencyKey != null) {
      req.putHeader("Idempotency-Key", idempotencyKey);
    }
    if (form == null) {
      return req.send();
    }
    StringBuilder body = new StringBuilder();
    form.forEach((k, v) -> body.append(body.length() == 0 ? "" : "&").append(encode(k)).append('=').append(encode(v)));
    return req.putHeader("Content-Type", "application/x-www-form-urlencoded").sendBuffer(Buffer.buffer(body.toString()));
  }

  private JsonObject answer(HttpResponse<Buffer> resp) {
    Outbound.rejectServerError(config.name(), resp);
    try {
      return resp.body() == null ? new JsonObject() : new JsonObject(resp.body());
    } catch (DecodeException | ClassCastException e) {
      throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "answer is not a JSON object");
    }
  }

  private GatewayFailure error(HttpResponse<Buffer> resp, JsonObject body) {
    JsonObject err = body.getValue("error") instanceof JsonObject e ? e : new JsonObject();
    String code = err.getValue("code") instanceof String c ? c
        : err.getValue("type") instanceof String t ? t : "HTTP_" + resp.statusCode();
    return GatewayFailure.answered(config.name(), code, err.getValue("message") instanceof String m ? m : null);
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
