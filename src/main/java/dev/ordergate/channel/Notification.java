package dev.ordergate.channel;

import dev.ordergate.domain.PaymentCallback;

/**
 * A verified notification. {@code payment} is the internal callback when the notification reports a
 * real payment (status SUCCESS), else null: the notification is recorded and changes no order.
 * {@code payload} is the verified content (for WeChat Pay the decrypted resource), cut to
 * {@link #MAX_PAYLOAD_CHARS}.
 */
public record Notification(String notificationId, String eventType, String orderNo, PaymentCallback payment,
                           String payload) {

  public static final int MAX_PAYLOAD_CHARS = PaymentCallback.PAYLOAD_MAX_CHARS;

  public static String bounded(String payload) {
    return payload == null || payload.length() <= MAX_PAYLOAD_CHARS ? payload : payload.substring(0, MAX_PAYLOAD_CHARS);
  }

  public boolean isPayment() {
    return payment != null;
  }
}
