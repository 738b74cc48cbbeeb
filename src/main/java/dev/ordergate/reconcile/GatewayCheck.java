package dev.ordergate.reconcile;

/** What a reconciliation against the gateway's bill can find. */
public enum GatewayCheck {
  MISSING_RECEIPT("paid at the gateway, no receipt here (a lost notification): applied through the payment gate with --apply"),
  AMOUNT_DIFFERS("the gateway's amount or currency differs from our receipt's"),
  NOT_PAID_AT_GATEWAY("a SUCCESS receipt here that the gateway's bill does not have and its query does not confirm"),
  REFUND_NOT_HERE("refunded at the gateway, but no refund (REFUND_PENDING or REFUNDED exception order) here"),
  REFUND_AMOUNT_DIFFERS("the gateway's refund amount differs from our refunded exception order's"),
  REFUND_NOT_AT_GATEWAY("an exception order REFUNDED here that day whose refund the gateway's bill does not have");

  private final String description;

  GatewayCheck(String description) {
    this.description = description;
  }

  public String description() {
    return description;
  }
}
