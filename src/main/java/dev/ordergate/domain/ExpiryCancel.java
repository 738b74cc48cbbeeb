package dev.ordergate.domain;

/**
 * The answer of a cancellation that is conditional on the order's expiry (a timeout trigger):
 * {@code latenessSeconds} is cancelledAt - expiresAt for CANCELLED, {@code dueInMs} how long until
 * the expiry for NOT_DUE, by the database's clock.
 */
public record ExpiryCancel(String orderNo, Kind kind, double latenessSeconds, long dueInMs) {

  public enum Kind {
    /** This trigger won the gate. */
    CANCELLED,
    /** The order had left PENDING_PAYMENT before (paid or cancelled): nothing changed. */
    CLOSED,
    /** Still pending and not yet expired: nothing changed; try again after {@code dueInMs}. */
    NOT_DUE,
    /** Due, but another transaction holds the order (a payment in flight): try again shortly. */
    BUSY,
    NOT_FOUND
  }
}
