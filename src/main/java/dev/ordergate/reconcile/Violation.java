package dev.ordergate.reconcile;

import io.vertx.core.json.JsonObject;

/** One broken invariant: the order (or SKU) it is about and what is wrong. */
public record Violation(Invariant invariant, String orderNo, String sku, String detail) {

  public JsonObject toJson() {
    return new JsonObject().put("invariant", invariant.name()).put("orderNo", orderNo).put("sku", sku)
        .put("detail", detail);
  }

  public String line() {
    String subject = orderNo != null ? "order " + orderNo + (sku != null ? " sku " + sku : "")
        : sku != null ? "sku " + sku : "-";
    return invariant.name() + "  " + subject + ": " + detail;
  }
}
