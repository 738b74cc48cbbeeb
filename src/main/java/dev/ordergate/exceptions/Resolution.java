package dev.ordergate.exceptions;

/** How an operator closed an exception. The service records it; the act itself happened elsewhere. */
public enum Resolution {
  REFUNDED_MANUALLY,
  ORDER_REINSTATED,
  DISMISSED
}
