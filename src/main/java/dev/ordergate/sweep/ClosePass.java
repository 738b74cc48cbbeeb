package dev.ordergate.sweep;

import io.vertx.core.Future;

/**
 * Runs at the start of every sweep run, before the first claim and outside any transaction: close
 * before cancel closes and queries the open payment attempts of due orders at their gateways, so that
 * the claim (which skips orders with an OPEN attempt) can cancel those whose trade is closed. Its
 * failure is logged and the run goes on: orders with open attempts simply wait for the next run.
 */
@FunctionalInterface
public interface ClosePass {

  ClosePass NONE = (graceSeconds, limit) -> Future.succeededFuture();

  Future<Void> run(long graceSeconds, int limit);
}
