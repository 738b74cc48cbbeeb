package dev.ordergate.domain;

/** Why received money was not applied to an order. */
public enum ExceptionKind {
  LATE_AFTER_CANCEL,
  DOUBLE_PAYMENT,
  AMOUNT_MISMATCH,
  UNKNOWN_ORDER,
  /** A SUCCESS duplicate whose order or amount differs from the first SUCCESS of its txn: manual review. */
  CONFLICTING_DUPLICATE;

  public static ExceptionKind of(CallbackOutcome outcome) {
    return valueOf(outcome.name());
  }
}
