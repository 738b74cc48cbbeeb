package dev.ordergate.domain;

/** An order's status. The only exits from {@link #PENDING_PAYMENT} are the gate's conditional updates. */
public enum OrderStatus {
  PENDING_PAYMENT,
  PAID,
  CANCELLED;

  public boolean isTerminal() {
    return this != PENDING_PAYMENT;
  }
}
