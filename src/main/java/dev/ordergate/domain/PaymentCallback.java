package dev.ordergate.domain;

/**
 * A verified, parsed payment notification. {@code gatewayStatus} is the channel's word mapped to ours:
 * {@code SUCCESS} is a payment (it claims the idempotency key (channel, txn id)); anything else is a
 * non-final or non-payment notification that is recorded and changes nothing. {@code notificationId}
 * (the gateway's own id of this delivery) and {@code payload} (the verified raw text, bounded) may be null.
 * {@code currency} (ISO 4217) must be the order's, or the payment is an AMOUNT_MISMATCH; null means
 * "the order's".
 */
public record PaymentCallback(String channel, String txnId, String orderNo, long amountCents, String gatewayStatus,
                              String notificationId, String payload, String currency) {

  public static final String SUCCESS = "SUCCESS";
  /** Stored payloads are cut to this many characters. */
  public static final int PAYLOAD_MAX_CHARS = 8192;

  public PaymentCallback {
    if (payload != null && payload.length() > PAYLOAD_MAX_CHARS) {
      payload = payload.substring(0, PAYLOAD_MAX_CHARS);
    }
  }

  public PaymentCallback(String channel, String txnId, String orderNo, long amountCents, String gatewayStatus,
                         String notificationId, String payload) {
    this(channel, txnId, orderNo, amountCents, gatewayStatus, notificationId, payload, null);
  }

  public PaymentCallback(String channel, String txnId, String orderNo, long amountCents, String gatewayStatus) {
    this(channel, txnId, orderNo, amountCents, gatewayStatus, null, null, null);
  }

  public boolean isSuccess() {
    return SUCCESS.equals(gatewayStatus);
  }

  /** Same payment content (order and amount): a SUCCESS duplicate that differs is a conflict. */
  public boolean samePaymentAs(String otherOrderNo, long otherAmountCents) {
    return orderNo.equals(otherOrderNo) && amountCents == otherAmountCents;
  }
}
