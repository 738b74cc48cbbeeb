package dev.ordergate.outbox;

/** What an outbox event tells the outside world. */
public enum OutboxEventType {
  /** For the warehouse: ship it. */
  ORDER_PAID,
  ORDER_CANCELLED,
  /** A text message to the customer, by template key. */
  NOTIFY_SMS,
  /** A refund request to the channel's {@code refundUrl}; its 2xx confirms the refund. */
  REFUND_REQUESTED,
  /** The broker tier's timeout message for a new order, handed to its publisher (issue 12). */
  ORDER_TIMEOUT
}
