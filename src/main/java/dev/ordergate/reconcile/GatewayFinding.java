package dev.ordergate.reconcile;

import io.vertx.core.json.JsonObject;

/**
 * One difference between the gateway's bill and our books. Amounts in minor units (null where one side has
 * nothing); {@code resolution}: what was done about it (with --apply, a missing payment's outcome at the
 * gate, e.g. APPLIED or LATE_AFTER_CANCEL), null when nothing was done.
 */
public record GatewayFinding(GatewayCheck check, String orderNo, String txnId, String refundId, Long gatewayAmountCents,
                             Long ourAmountCents, String detail, String resolution) {

  public GatewayFinding resolved(String how) {
    return new GatewayFinding(check, orderNo, txnId, refundId, gatewayAmountCents, ourAmountCents, detail, how);
  }

  public JsonObject toJson() {
    return new JsonObject().put("check", check.name()).put("orderNo", orderNo).put("txnId", txnId)
        .put("refundId", refundId).put("gatewayAmountCents", gatewayAmountCents).put("ourAmountCents", ourAmountCents)
        .put("detail", detail).put("resolution", resolution);
  }

  public static GatewayFinding fromJson(JsonObject j) {
    return new GatewayFinding(GatewayCheck.valueOf(j.getString("check")), j.getString("orderNo"), j.getString("txnId"),
        j.getString("refundId"), j.getLong("gatewayAmountCents"), j.getLong("ourAmountCents"), j.getString("detail"),
        j.getString("resolution"));
  }

  public String line() {
    return check.name() + "  order " + orderNo + " txn " + txnId + (refundId == null ? "" : " refund " + refundId)
        + ": " + detail + (resolution == null ? "" : " -> " + resolution);
  }
}
