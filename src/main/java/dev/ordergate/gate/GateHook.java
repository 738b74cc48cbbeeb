package dev.ordergate.gate;

import io.vertx.core.Future;
import io.vertx.sqlclient.SqlConnection;

/**
 * A point between a gate's conditional UPDATE and the loser's read of the status it lost to. Production
 * uses {@link #NONE}; a test uses it to commit a concurrent write exactly there (the one interleaving
 * that makes a loser read a pending order).
 */
@FunctionalInterface
public interface GateHook {

  GateHook NONE = conn -> Future.succeededFuture();

  Future<Void> afterUpdate(SqlConnection conn);
}
