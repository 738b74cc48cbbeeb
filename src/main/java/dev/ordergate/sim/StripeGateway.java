package dev.ordergate.sim;

import dev.ordergate.channel.stripe.StripeSignature;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Stripe webhooks: an Event JSON signed {@code Stripe-Signature: t=...,v1=HMAC-SHA256(whsec, "t.body")}.
 * A payment is reported as {@code payment_intent.succeeded} (status null) or, with status
 * {@code checkout.session.completed} / {@code checkout.session.async_payment_succeeded}, as that
 * Checkout Session event for the same PaymentIntent.
 */
public final class StripeGateway implements Gateway {

  private final String webhookSecret;

  public StripeGateway(String webhookSecret) {
    this.webhookSecret = webhookSecret;
  }

  @Override
  public String kind() {
    return "stripe";
  }

  public JsonObject event(Payment p, long nowSeconds) {
    String type = p.status() == null ? "payment_intent.succeeded" : p.status();
    JsonObject object;
    if (type.startsWith("checkout.session.")) {
      object = new JsonObject().put("id", "cs_test_" + WechatPayGateway.random(12)).put("object", "checkout.session")
          .put("mode", "payment").put("status", "complete").put("payment_status", "paid")
          .put("client_reference_id", p.orderNo()).put("payment_intent", p.txnId())
          .put("amount_total", p.amountCents()).put("currency", p.currency().toLowerCase(Locale.ROOT));
    } else {
      object = new JsonObject().put("id", p.txnId()).put("object", "payment_intent").put("status", "succeeded")
          .put("amount", p.amountCents()).put("amount_received", p.amountCents())
          .put("currency", p.currency().toLowerCase(Locale.ROOT)).put("metadata", new JsonObject().put("orderNo", p.orderNo()));
    }
    return event(type, object, nowSeconds);
  }

  public static JsonObject event(String type, JsonObject object, long nowSeconds) {
    return new JsonObject().put("id", "evt_" + WechatPayGateway.random(12)).put("object", "event")
        .put("api_version", "2024-06-20").put("created", nowSeconds).put("livemode", false)
        .put("pending_webhooks", 1).put("type", type).put("data", new JsonObject().put("object", object));
  }

  @Override
  public Delivery notification(Payment p, long nowSeconds) {
    return notification(event(p, nowSeconds), nowSeconds);
  }

  public Delivery notification(JsonObject event, long nowSeconds) {
    byte[] body = event.encodePrettily().getBytes(StandardCharsets.UTF_8);
    return new Delivery(Map.of("Content-Type", "application/json; charset=utf-8",
        StripeSignature.HEADER, StripeSignature.header(webhookSecret, nowSeconds, body)), body);
  }

  @Override
  public boolean accepted(int status, String body) {
    return status / 100 == 2;
  }

  /** Live mode retries with exponential backoff for up to three days; the intervals are not published. */
  @Override
  public List<Duration> retrySchedule() {
    return List.of(Duration.ofMinutes(1), Duration.ofMinutes(5), Duration.ofMinutes(30), Duration.ofHours(2),
        Duration.ofHours(5), Duration.ofHours(10), Duration.ofHours(10), Duration.ofHours(24), Duration.ofHours(24));
  }
}
