package dev.ordergate.domain;

/** The answer to a verified callback; a duplicate returns the first answer with {@code duplicate = true}. */
public record CallbackResult(CallbackOutcome outcome, String orderNo, OrderStatus orderStatus, boolean duplicate) {

  public CallbackResult asDuplicate() {
    return new CallbackResult(outcome, orderNo, orderStatus, true);
  }
}
