package dev.ordergate.gate;

import dev.ordergate.domain.CancelResult;
import dev.ordergate.domain.TransitionSource;
import io.vertx.core.Future;

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
}
