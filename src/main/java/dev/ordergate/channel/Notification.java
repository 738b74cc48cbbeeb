package dev.ordergate.channel;

import dev.ordergate.domain.PaymentCallback;

/**
 * A verified notification. {@code callback} goes to the gate: status SUCCESS for a real payment, or
 * the gateway's own non-final status (Alipay {@code WAIT_BUYER_PAY}, an unpaid Checkout Session) of a
 * known transaction, which the gate records and which claims nothing. Null: the notification names
 * no transaction (a refund event, another Stripe event type); it is recorded apart and changes no
 * order. {@code payload} is the verified content (for WeChat Pay the decrypted resource), cut to
 * {@link #MAX_PAYLOAD_CHARS}. {@code refund}: a refund result notification (WeChat Pay REFUND.*, Stripe
 * refund.* / charge.refunded) read as such, else null; it never goes to the gate.
 */
public record Notification(String notificationId, String eventType, String orderNo, PaymentCallback callback,
                           String payload, RefundNotice refund) {

  public static final int MAX_PAYLOAD_CHARS = PaymentCallback.PAYLOAD_MAX_CHARS;

  public Notification(String notificationId, String eventType, String orderNo, PaymentCallback callback, String payload) {
    this(notificationId, eventType, orderNo, callback, payload, null);
  }

  /**
   * What a refund notification says: ordergate's refund id as the gateway echoes it (WeChat out_refund_no,
   * Stripe metadata.refundId; null when the event does not carry it, e.g. a charge.refunded without its
   * refunds), the payment's txn id (to find the refund by when the id is missing), the result, and the
   * gateway's own refund id and status word.
   */
  public record RefundNotice(String refundId, String txnId, GatewayClient.RefundState state, String gatewayRefundId,
                             String gatewayStatus) {}

  public static String bounded(String payload) {
    return payload == null || payload.length() <= MAX_PAYLOAD_CHARS ? payload : payload.substring(0, MAX_PAYLOAD_CHARS);
  }

  /** A real payment: the only kind of notification that claims the idempotency key. */
  public boolean isPayment() {
    return callback != null && callback.isSuccess();
  }

  /**
   * The gate's callback for a verified notification that is not a payment, when its transaction,
   * order and amount can be read ({@code fields} throws {@link ChannelRejection} otherwise): null then.
   */
  public static PaymentCallback nonFinal(java.util.function.Supplier<PaymentCallback> fields) {
    try {
      PaymentCallback cb = fields.get();
      return cb.isSuccess() ? null : cb;
    } catch (ChannelRejection unreadable) {
      return null;
    }
  }
}
