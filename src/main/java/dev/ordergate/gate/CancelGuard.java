package dev.ordergate.gate;

import dev.ordergate.domain.CancelResult;
import dev.ordergate.domain.TransitionSource;
import io.vertx.core.Future;

import java.util.Collection;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What runs around a single cancellation before it goes through the gate: close-before-cancel closes
 * and queries the order's open payment attempts at their gateways (outside any transaction), then lets
 * the gate decide. {@link #NONE} goes straight to the gate.
 */
@FunctionalInterface
public interface CancelGuard {

  CancelGuard NONE = (orderNo, source, cancel) -> cancel.get();

  /** {@code cancel} runs the gate's transaction; the guard may fail instead (the order stays as it is). */
  Future<CancelResult> guard(String orderNo, TransitionSource source, Supplier<Future<CancelResult>> cancel);

  /**
   * Before a batch of expiry cancellations (the broker tier's timeout messages): settles the orders'
   * open attempts and answers the orders that must wait (their close was deferred); the rest may go
   * through the gate.
   */
  default Future<Set<String>> beforeBatch(Collection<String> orderNos) {
    return Future.succeededFuture(Set.of());
  }

  /** How long an order that must wait is held before its expiry cancellation is tried again. */
  long WAIT_RETRY_MS = 5_000;
}
