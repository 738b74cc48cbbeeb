package dev.ordergate.domain;

/** The answer to a cancel request. */
public enum CancelOutcome {
  /** This request won the gate: stock and coupon were released in its transaction. */
  CANCELLED,
  /** The order had already been cancelled (by anyone): nothing changed. */
  ALREADY_CANCELLED,
  /** The payment won: nothing changed. */
  ALREADY_PAID,
  NOT_FOUND
}
