package dev.ordergate.channel;

import dev.ordergate.domain.PaymentCallback;

/**
 * A verified notification. {@code callback} goes to the gate: status SUCCESS for a real payment, or
 * the gateway's own non-final status (Alipay {@code WAIT_BUYER_PAY}, an unpaid Checkout Session) of a
 * known transaction, which the gate records and which claims nothing. Null: the notification names
 * no transaction (a refund event, another Stripe event type); it is recorded apart and changes no
 * order. {@code payload} is the verified content (for WeChat Pay the decrypted resource), cut to
 * {@link #MAX_PAYLOAD_CHARS}.
 */
public record Notification(String notificationId, String eventType, String orderNo, PaymentCallback callback,
                           String payload) {

  public static final int MAX_PAYLOAD_CHARS = PaymentCallback.PAYLOAD_MAX_CHARS;

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
