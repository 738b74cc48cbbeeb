package dev.ordergate.gate;

import dev.ordergate.db.Sql;
import dev.ordergate.domain.OrderStatus;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.outbox.OutboxWriter;
import io.vertx.core.Future;
import io.vertx.sqlclient.SqlConnection;
import dev.ordergate.db.Params;
import io.vertx.sqlclient.Tuple;

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

  public Future<Void> apply(SqlConnection conn, Cancelled won, TransitionSource source) {
    if (won.orderNos().isEmpty()) {
      return Future.succeededFuture();
    }
    String[] orderNos = won.orderNos().toArray(String[]::new);
    Tuple byOrders = Params.array(orderNos);
    return conn.preparedQuery(Sql.LOCK_STOCK_OF_ORDERS).execute(byOrders)
        .compose(v -> conn.preparedQuery(Sql.RESTOCK_ORDERS).execute(byOrders))
        .compose(v -> conn.preparedQuery(Sql.LEDGER_RETURN).execute(Params.of(orderNos, source.name())))
        .compose(v -> conn.preparedQuery(Sql.RELEASE_COUPONS).execute(byOrders))
        .compose(v -> conn.preparedQuery(Sql.TRANSITIONS_OUT_OF_PENDING).execute(Params.of(
            orderNos, OrderStatus.CANCELLED.name(),
            won.actors().toArray(String[]::new), won.references().toArray(String[]::new), source.name())))
        .compose(v -> outbox.cancelled(conn, orderNos, source));
  }
}
