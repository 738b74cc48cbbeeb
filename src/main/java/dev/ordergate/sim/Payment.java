package dev.ordergate.sim;

/**
 * What the simulated gateway reports: the shop's order number, the gateway's transaction id, the
 * amount in minor units, the currency and, where the gateway has one, a status (null: paid).
 */
public record Payment(String orderNo, String txnId, long amountCents, String currency, String status) {

  public Payment withStatus(String s) {
    return new Payment(orderNo, txnId, amountCents, currency, s);
  }
}
