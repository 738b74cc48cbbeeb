package dev.ordergate.gate;

import dev.ordergate.db.Sql;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.CancelOutcome;
import dev.ordergate.domain.CancelResult;
import dev.ordergate.domain.ExpiryCancel;
import dev.ordergate.domain.OrderStatus;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.metrics.Metrics;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import dev.ordergate.db.Params;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collections;
import java.util.List;

/**
 * Cancels one order through the one-way gate: one conditional UPDATE; only the transaction that
 * changed the row releases stock and coupon. A loser writes nothing and answers from the status it
 * then reads. Cancel is idempotent by order number: a repeat answers ALREADY_CANCELLED.
 */
public final class CancelGate {

  private static final Logger log = LoggerFactory.getLogger(CancelGate.class);

  private final Pool pool;
  private final CancellationEffects effects;
  private final Metrics metrics;

  public CancelGate(Pool pool, CancellationEffects effects, Metrics metrics) {
    this.pool = pool;
    this.effects = effects;
    this.metrics = metrics;
  }

  public Future<CancelResult> cancel(String orderNo, TransitionSource source, String actor, String reference) {
    return Tx.run(pool, conn -> conn.preparedQuery(Sql.CANCEL_ONE)
            .execute(Params.of(orderNo, source.name()))
            .compose(won -> won.rowCount() == 1
                ? applyEffects(conn, orderNo, source, actor, reference)
                    .map(v -> new CancelResult(orderNo, CancelOutcome.CANCELLED, OrderStatus.CANCELLED))
                : answerLoser(conn, orderNo)))
        .onSuccess(result -> {
          if (result.outcome() == CancelOutcome.CANCELLED) {
            metrics.transitions(source, OrderStatus.CANCELLED, 1);
            log.debug("order {} PENDING_PAYMENT -> CANCELLED by {} ({})", orderNo, source, actor);
          }
        });
  }

  /**
   * Cancels one order for a timeout trigger (a delayed message): the same gate and effects as
   * {@link #cancel}, conditional on expiry in the same UPDATE; the answer says whether the trigger
   * came early (NOT_DUE, with the time left) or too late (CLOSED).
   */
  public Future<ExpiryCancel> cancelExpired(String orderNo, TransitionSource source, String actor, String reference) {
    return Tx.run(pool, conn -> conn.preparedQuery(Sql.CANCEL_ONE_EXPIRED)
            .execute(Params.of(orderNo, source.name()))
            .compose(won -> won.rowCount() == 1
                ? applyEffects(conn, orderNo, source, actor, reference)
                    .map(v -> new ExpiryCancel(orderNo, ExpiryCancel.Kind.CANCELLED,
                        won.iterator().next().getDouble("lateness_seconds"), 0))
                : conn.preparedQuery(Sql.ORDER_EXPIRY).execute(Params.of(orderNo)).map(rows -> {
                  if (rows.size() == 0) {
                    return new ExpiryCancel(orderNo, ExpiryCancel.Kind.NOT_FOUND, 0, 0);
                  }
                  Row r = rows.iterator().next();
                  return "PENDING_PAYMENT".equals(r.getString("status"))
                      ? new ExpiryCancel(orderNo, ExpiryCancel.Kind.NOT_DUE, 0, Math.max(1, r.getLong("due_in_ms")))
                      : new ExpiryCancel(orderNo, ExpiryCancel.Kind.CLOSED, 0, 0);
                })))
        .onSuccess(result -> {
          if (result.kind() == ExpiryCancel.Kind.CANCELLED) {
            metrics.transitions(source, OrderStatus.CANCELLED, 1);
            log.debug("order {} PENDING_PAYMENT -> CANCELLED by {} ({})", orderNo, source, actor);
          }
        });
  }

  /** The winner's side effects, in its transaction. */
  private Future<Void> applyEffects(SqlConnection conn, String orderNo, TransitionSource source, String actor,
                                    String reference) {
    return effects.apply(conn, new CancellationEffects.Cancelled(
        List.of(orderNo), List.of(actor), Collections.singletonList(reference)), source);
  }

  private static Future<CancelResult> answerLoser(SqlConnection conn, String orderNo) {
    return conn.preparedQuery(Sql.ORDER_STATUS).execute(Params.of(orderNo)).map(rows -> loserAnswer(orderNo, rows));
  }

  private static CancelResult loserAnswer(String orderNo, RowSet<Row> rows) {
    if (rows.size() == 0) {
      return new CancelResult(orderNo, CancelOutcome.NOT_FOUND, null);
    }
    OrderStatus status = OrderStatus.valueOf(rows.iterator().next().getString("status"));
    return switch (status) {
      case PAID -> new CancelResult(orderNo, CancelOutcome.ALREADY_PAID, status);
      case CANCELLED -> new CancelResult(orderNo, CancelOutcome.ALREADY_CANCELLED, status);
      // The conditional UPDATE saw a terminal status; a status never returns to pending.
      case PENDING_PAYMENT -> throw new IllegalStateException("order " + orderNo + " lost the gate but reads pending");
    };
  }
}
