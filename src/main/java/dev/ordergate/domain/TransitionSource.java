package dev.ordergate.domain;

/** Who moved an order: recorded on every transition so a timeline can be rebuilt. */
public enum TransitionSource {
  USER,
  OPERATOR,
  TIMEOUT_SWEEP,
  PAYMENT_CALLBACK,
  /** A delayed timeout message of the broker tier (issue 12). */
  TIMEOUT_MESSAGE
}
