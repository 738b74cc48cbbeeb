package dev.ordergate.gate;

import dev.ordergate.db.Sql;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.outbox.OutboxWriter;
import io.vertx.core.Future;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import dev.ordergate.db.Params;

import java.util.List;

/**
 * What a won cancellation does, in the winner's transaction, set-based over exactly the orders
 * the gate's conditional UPDATE returned: restock every item (with its ledger row), release the
 * coupon, record the transition, write ORDER_CANCELLED and NOTIFY_SMS to the outbox. The single
 * cancel and the timeout sweep share it.
 */
public final class CancellationEffects {

  private final OutboxWriter outbox;

  public CancellationEffects(OutboxWriter outbox) {
    this.outbox = outbox;
  }

  /** Orders cancelled in one statement, with who and why for each. */
  public record Cancelled(List<String> orderNos, List<String> actors, List<String> references) {
    public int size() {
      return orderNos.size();
    }
  }

  /**
   * Three statements, sent together (the connection pipelines them, so the effects cost one round trip):
   * {@link Sql#CANCELLATION_EFFECTS}, then the stock rows locked in SKU order and restocked. The stock comes
   * last, so a hot SKU's row stays locked only from there to the commit, not while the outbox rows are
   * written (a sweep batch of 500 spends tens of milliseconds on those). When one statement fails, the
   * transaction is aborted, the ones after it fail with it, and the first one's error is answered.
   */
  public Future<Void> apply(SqlConnection conn, Cancelled won, TransitionSource source) {
    if (won.orderNos().isEmpty()) {
      return Future.succeededFuture();
    }
    String[] orderNos = won.orderNos().toArray(String[]::new);
    Future<?> written = conn.preparedQuery(Sql.CANCELLATION_EFFECTS).execute(Params.of(orderNos, source.name(),
        OutboxWriter.SMS_ORDER_CANCELLED, won.actors().toArray(String[]::new),
        won.references().toArray(String[]::new)));
    Tuple byOrders = Params.array(orderNos);
    Future<?> locked = conn.preparedQuery(Sql.LOCK_STOCK_OF_ORDERS).execute(byOrders);
    Future<?> restocked = conn.preparedQuery(Sql.RESTOCK_ORDERS).execute(byOrders);
    return written.compose(v -> locked).compose(v -> restocked).onSuccess(v -> outbox.written(conn)).mapEmpty();
  }
}
