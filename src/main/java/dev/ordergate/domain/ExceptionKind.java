package dev.ordergate.domain;

/** Why received money was not applied to an order. */
public enum ExceptionKind {
  LATE_AFTER_CANCEL,
  DOUBLE_PAYMENT,
  AMOUNT_MISMATCH,
  UNKNOWN_ORDER;

  public static ExceptionKind of(CallbackOutcome outcome) {
    return valueOf(outcome.name());
  }
}
