package dev.ordergate.domain;

/** A verified, parsed payment callback. {@code gatewayStatus} is the gateway's word, e.g. SUCCESS. */
public record PaymentCallback(String channel, String txnId, String orderNo, long amountCents, String gatewayStatus) {

  public boolean isSuccess() {
    return "SUCCESS".equals(gatewayStatus);
  }
}
