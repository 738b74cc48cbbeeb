package dev.ordergate.domain;

/**
 * A verified, parsed payment callback. {@code gatewayStatus} is SUCCESS for a real payment (each
 * channel kind maps its gateway's words to it). {@code currency} (ISO 4217) must be the order's, or
 * the payment is an AMOUNT_MISMATCH; null means "the order's". {@code notificationId} and
 * {@code payload} (the verified content, bounded) are kept with the receipt; both may be null.
 */
public record PaymentCallback(String channel, String txnId, String orderNo, long amountCents, String gatewayStatus,
                              String currency, String notificationId, String payload) {

  public PaymentCallback(String channel, String txnId, String orderNo, long amountCents, String gatewayStatus) {
    this(channel, txnId, orderNo, amountCents, gatewayStatus, null, null, null);
  }

  public boolean isSuccess() {
    return "SUCCESS".equals(gatewayStatus);
  }
}
