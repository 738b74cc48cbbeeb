package dev.ordergate.channel.stripe;

import dev.ordergate.channel.Answer;
import dev.ordergate.channel.BaseChannel;
import dev.ordergate.channel.ChannelRejection;
import dev.ordergate.channel.Fields;
import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.Inbound;
import dev.ordergate.channel.Notification;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.time.Clock;

/**
 * Stripe webhook Events. Payments: {@code payment_intent.succeeded} (order in
 * {@code metadata.orderNo}, amount {@code amount_received}), {@code checkout.session.completed} with
 * {@code payment_status=paid} and {@code checkout.session.async_payment_succeeded} (order in
 * {@code client_reference_id}, amount {@code amount_total}). txn = the PaymentIntent id in both, so
 * the two events of one payment are one receipt. Refund results ({@code refund.created|updated|failed} with
 * our metadata[refundId], {@code charge.refunded}) are read for the refund's exception, never the gate.
 * Other verified events are recorded only. Answers:
 * 200 {@code {"received":true}} when processed; 400 or 5xx with ordergate's error JSON otherwise.
 */
public final class StripeChannel extends BaseChannel<StripeSettings> {

  public StripeChannel(ChannelConfig config, Clock clock) {
    super(config, clock);
  }

  @Override
  public Notification receive(Inbound request) {
    if (!StripeSignature.verify(request.header(StripeSignature.HEADER), request.body(), settings.webhookSecrets(),
        clock.instant().getEpochSecond(), config.toleranceSeconds())) {
      throw ChannelRejection.badSignature("Stripe-Signature missing, invalid or outside the time tolerance");
    }
    JsonObject event = Fields.object(request.body());
    String id = Fields.string(event, "id", 255, true);
    String type = Fields.string(event, "type", 128, true);
    JsonObject object = Fields.object(Fields.object(event, "data"), "object");
    String payload = Notification.bounded(new String(request.body(), StandardCharsets.UTF_8));
    switch (type) {
      case "payment_intent.succeeded" -> {
        JsonObject metadata = object.getValue("metadata") instanceof JsonObject m ? m : new JsonObject();
        if (!(metadata.getValue("orderNo") instanceof String)) {
          // Verified, but not created by this shop (no order number): another integration's payment.
          return new Notification(id, type, null, null, payload);
        }
        PaymentCallback cb = new PaymentCallback(config.name(), Fields.id(object, "id"), Fields.id(metadata, "orderNo"),
            Fields.amount(object, "amount_received"), PaymentCallback.SUCCESS, id, payload, currency(object));
        return new Notification(id, type, cb.orderNo(), cb, payload);
      }
      case "checkout.session.completed", "checkout.session.async_payment_succeeded" -> {
        if (!"paid".equals(object.getValue("payment_status"))) {
          // A delayed method: the session completed, the money has not arrived (async_payment_succeeded follows).
          String word = type + ":" + object.getValue("payment_status");
          return new Notification(id, type, clientReference(object),
              Notification.nonFinal(() -> session(object, word, id, payload)), payload);
        }
        PaymentCallback cb = session(object, PaymentCallback.SUCCESS, id, payload);
        return new Notification(id, type, cb.orderNo(), cb, payload);
      }
      case "refund.created", "refund.updated", "refund.failed" -> {
        // A Refund object: ours carries metadata[refundId] (set when ordergate made it).
        Notification.RefundNotice notice = null;
        if (object.getValue("metadata") instanceof JsonObject m && m.getValue("refundId") instanceof String refundId) {
          GatewayClient.Refund r = StripeClient.refund(object);
          notice = new Notification.RefundNotice(refundId, string(object, "payment_intent"), r.state(), r.gatewayRefundId(),
              r.gatewayStatus());
        }
        return new Notification(id, type, null, null, payload, notice);
      }
      case "charge.refunded" -> {
        return new Notification(id, type, null, null, payload, chargeRefunded(object));
      }
      default -> {
        return new Notification(id, type, null, null, payload);
      }
    }
  }

  /**
   * A charge refunded: ours is named by the metadata[refundId] of a refund in its {@code refunds} list when the
   * event carries the list (older API versions), else by the charge's PaymentIntent (our txn id); only a charge
   * refunded in full confirms (ordergate refunds whole payments). Null: nothing to settle.
   */
  private static Notification.RefundNotice chargeRefunded(JsonObject charge) {
    String pi = string(charge, "payment_intent");
    if (charge.getValue("refunds") instanceof JsonObject list && list.getValue("data") instanceof io.vertx.core.json.JsonArray data) {
      for (Object o : data) {
        if (o instanceof JsonObject refund && refund.getValue("metadata") instanceof JsonObject m
            && m.getValue("refundId") instanceof String refundId) {
          GatewayClient.Refund r = StripeClient.refund(refund);
          return new Notification.RefundNotice(refundId, pi, r.state(), r.gatewayRefundId(), r.gatewayStatus());
        }
      }
    }
    return pi != null && Boolean.TRUE.equals(charge.getValue("refunded"))
        ? new Notification.RefundNotice(null, pi, GatewayClient.RefundState.REFUNDED, null, "charge.refunded")
        : null;
  }

  private static String string(JsonObject o, String key) {
    return o.getValue(key) instanceof String s && s.matches("[A-Za-z0-9._:-]{1,255}") ? s : null;
  }

  /** A Checkout Session's payment, keyed by its PaymentIntent (a session without one by its own id). */
  private PaymentCallback session(JsonObject object, String status, String id, String payload) {
    String txnId = object.getValue("payment_intent") instanceof String pi
        ? Fields.id(pi, "payment_intent") : Fields.id(object, "id");
    return new PaymentCallback(config.name(), txnId, Fields.id(object, "client_reference_id"),
        Fields.amount(object, "amount_total"), status, id, payload, currency(object));
  }

  private static String currency(JsonObject object) {
    return Fields.currency(object.getValue("currency") instanceof String c ? c : null, "currency");
  }

  private static String clientReference(JsonObject session) {
    return session.getValue("client_reference_id") instanceof String s && s.matches("[A-Za-z0-9._:-]{1,64}") ? s : null;
  }

  @Override
  public Answer processed(CallbackResult result) {
    return Answer.json(200, new JsonObject().put("received", true).put("outcome", result.outcome().name()).encode());
  }

  @Override
  public Answer rejected(ChannelRejection rejection) {
    return Answer.error(400, rejection.code(), rejection.getMessage());
  }

  @Override
  public Answer retry(int status, String code, String message) {
    return Answer.error(status, code, message);
  }
}
