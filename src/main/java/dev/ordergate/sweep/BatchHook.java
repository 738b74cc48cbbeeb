package dev.ordergate.sweep;

import io.vertx.core.Future;

import java.util.List;

/**
 * Called inside each sweep batch's transaction after the cancellation and its side effects, just
 * before commit: a failed future rolls the batch back and stops the run there. The service uses
 * {@link #NONE}; tests inject failures with it.
 */
@FunctionalInterface
public interface BatchHook {

  BatchHook NONE = (runId, batchNo, cancelled) -> Future.succeededFuture();

  /** {@code batchNo} counts from 1 within the run; {@code cancelled} are the orders this batch cancelled. */
  Future<Void> beforeCommit(long runId, int batchNo, List<String> cancelled);
}
