package dev.ordergate.domain;

/** What a verified payment callback did. Everything but APPLIED and IGNORED opens an exception order. */
public enum CallbackOutcome {
  APPLIED,
  LATE_AFTER_CANCEL,
  DOUBLE_PAYMENT,
  AMOUNT_MISMATCH,
  UNKNOWN_ORDER,
  IGNORED;

  public boolean opensException() {
    return this != APPLIED && this != IGNORED;
  }
}
