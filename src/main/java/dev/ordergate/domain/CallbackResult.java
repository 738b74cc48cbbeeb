package dev.ordergate.domain;

/**
 * The answer to a verified callback; a duplicate returns the first answer with {@code duplicate = true}.
 * {@code conflicting}: a SUCCESS duplicate whose order or amount differs from the first SUCCESS of its txn
 * (it got the first answer, and an exception order for manual review).
 */
public record CallbackResult(CallbackOutcome outcome, String orderNo, OrderStatus orderStatus, boolean duplicate,
                             boolean conflicting) {

  public CallbackResult(CallbackOutcome outcome, String orderNo, OrderStatus orderStatus, boolean duplicate) {
    this(outcome, orderNo, orderStatus, duplicate, false);
  }

  public CallbackResult asDuplicate() {
    return new CallbackResult(outcome, orderNo, orderStatus, true, conflicting);
  }

  public CallbackResult asConflicting() {
    return new CallbackResult(outcome, orderNo, orderStatus, true, true);
  }
}
