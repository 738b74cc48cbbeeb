package dev.ordergate.outbox;

import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Params;
import io.vertx.core.Future;
import io.vertx.sqlclient.SqlConnection;

/**
 * Writes the winners' outgoing events into the outbox, in the gate's own transaction and
 * set-based over exactly the orders its conditional UPDATE returned: a loser never gets here.
 */
public final class OutboxWriter {

  public static final String SMS_ORDER_PAID = "order_paid";
  public static final String SMS_ORDER_CANCELLED = "order_cancelled";

  private final OutboxSignal signal;

  public OutboxWriter(OutboxSignal signal) {
    this.signal = signal;
  }

  /** ORDER_TIMEOUT for a new order (the broker tier), in its creation transaction. */
  public Future<Void> timeoutScheduled(SqlConnection conn, String orderNo) {
    return conn.preparedQuery(OutboxSql.INSERT_TIMEOUT_EVENTS).execute(Params.array(new String[] {orderNo}))
        .onSuccess(v -> signal.afterCommit(conn))
        .mapEmpty();
  }

  /**
   * A statement of the caller's transaction wrote events (the payment gate writes ORDER_PAID and
   * NOTIFY_SMS in its own statement, {@code Sql.PAY_ORDERS}, a cancellation ORDER_CANCELLED and NOTIFY_SMS in
   * {@code Sql.CANCELLATION_EFFECTS}): nudge the relay once it commits.
   */
  public void written(SqlConnection conn) {
    signal.afterCommit(conn);
  }
}
