package dev.ordergate.outbox;

import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Wakes the relays of this process after a transaction that wrote outbox events commits, so a
 * new event leaves at once instead of at the next poll. Only a latency hint: the relays poll
 * anyway, and other instances find the events by polling.
 */
public final class OutboxSignal {

  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

  public void listen(Runnable listener) {
    listeners.add(listener);
  }

  public void unlisten(Runnable listener) {
    listeners.remove(listener);
  }

  /** Signals once {@code conn}'s transaction has committed (nothing on rollback). */
  public void afterCommit(SqlConnection conn) {
    Transaction tx = conn.transaction();
    if (tx == null) {
      signal();
      return;
    }
    tx.completion().onSuccess(v -> signal());
  }

  public void signal() {
    listeners.forEach(Runnable::run);
  }
}
