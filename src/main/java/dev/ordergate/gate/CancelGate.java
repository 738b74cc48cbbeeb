package dev.ordergate.gate;

import dev.ordergate.db.Sql;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.CancelOutcome;
import dev.ordergate.domain.CancelResult;
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
import dev.ordergate.domain.ExpiryCancel;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

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
  private final GateHook hook;
  private final CancelGuard guard;

  public CancelGate(Pool pool, CancellationEffects effects, Metrics metrics) {
    this(pool, effects, metrics, GateHook.NONE);
  }

  public CancelGate(Pool pool, CancellationEffects effects, Metrics metrics, GateHook hook) {
    this(pool, effects, metrics, hook, CancelGuard.NONE);
  }

  /** {@code guard} runs first (close before cancel); the gate's transaction follows when it lets it. */
  public CancelGate(Pool pool, CancellationEffects effects, Metrics metrics, GateHook hook, CancelGuard guard) {
    this.pool = pool;
    this.effects = effects;
    this.metrics = metrics;
    this.hook = hook;
    this.guard = guard;
  }

  public Future<CancelResult> cancel(String orderNo, TransitionSource source, String actor, String reference) {
    return guard.guard(orderNo, source, () -> through(orderNo, source, actor, reference));
  }

  private Future<CancelResult> through(String orderNo, TransitionSource source, String actor, String reference) {
    return Tx.run(pool, conn -> attempt(conn, orderNo, source, actor, reference, false))
        .onSuccess(result -> {
          if (result.outcome() == CancelOutcome.CANCELLED) {
            metrics.transitions(source, OrderStatus.CANCELLED, 1);
            log.debug("order {} PENDING_PAYMENT -> CANCELLED by {} ({})", orderNo, source, actor);
          }
        });
  }

  /**
   * Cancels orders for a timeout trigger (delayed messages, set-based for a batch of them): the same
   * gate and effects as {@link #cancel}, conditional on expiry in the same UPDATE. One answer per
   * distinct order number: CANCELLED for the winners; for the others whether the trigger came early
   * (NOT_DUE, with the time left) or too late (CLOSED), BUSY (due, but held by another transaction,
   * which is skipped rather than waited for, as the sweep's claim does), or NOT_FOUND.
   */
  public Future<Map<String, ExpiryCancel>> cancelExpired(Collection<String> orderNos, TransitionSource source,
                                                         String actor, String reference) {
    if (orderNos.isEmpty()) {
      return Future.succeededFuture(Map.of());
    }
    // Close before cancel: orders whose payment could not be closed at its gateway wait and come back.
    return guard.beforeBatch(orderNos).compose(waiting -> {
      TreeSet<String> due = new TreeSet<>(orderNos);
      due.removeAll(waiting);
      return cancelDue(due.toArray(String[]::new), source, actor, reference).map(result -> {
        Map<String, ExpiryCancel> out = new HashMap<>(result);
        waiting.forEach(no -> out.put(no, new ExpiryCancel(no, ExpiryCancel.Kind.NOT_DUE, 0, CancelGuard.WAIT_RETRY_MS)));
        return out;
      });
    });
  }

  private Future<Map<String, ExpiryCancel>> cancelDue(String[] nos, TransitionSource source, String actor,
                                                      String reference) {
    if (nos.length == 0) {
      return Future.succeededFuture(Map.of());
    }
    return Tx.run(pool, conn -> conn.preparedQuery(Sql.CLAIM_AND_CANCEL_EXPIRED).execute(Params.of(nos, source.name()))
            .compose(won -> {
              Map<String, ExpiryCancel> out = new HashMap<>();
              for (Row r : won) {
                String no = r.getString("order_no");
                out.put(no, new ExpiryCancel(no, ExpiryCancel.Kind.CANCELLED, r.getDouble("lateness_seconds"), 0));
              }
              List<String> winners = List.copyOf(out.keySet());
              String[] losers = Arrays.stream(nos).filter(no -> !out.containsKey(no)).toArray(String[]::new);
              return effects.apply(conn, new CancellationEffects.Cancelled(winners,
                      Collections.nCopies(winners.size(), actor), Collections.nCopies(winners.size(), reference)), source)
                  .compose(v -> losers.length == 0 ? Future.succeededFuture(out)
                      : conn.preparedQuery(Sql.ORDER_EXPIRIES).execute(Params.array(losers)).map(rows -> {
                        for (Row r : rows) {
                          String no = r.getString("order_no");
                          long dueInMs = r.getLong("due_in_ms");
                          out.put(no, !"PENDING_PAYMENT".equals(r.getString("status"))
                              ? new ExpiryCancel(no, ExpiryCancel.Kind.CLOSED, 0, 0)
                              : dueInMs > 0 ? new ExpiryCancel(no, ExpiryCancel.Kind.NOT_DUE, 0, dueInMs)
                              // Due and pending, yet not claimed: locked by another transaction (or
                              // created after this statement's snapshot); either way, again shortly.
                              : new ExpiryCancel(no, ExpiryCancel.Kind.BUSY, 0, 0));
                        }
                        for (String no : losers) {
                          out.putIfAbsent(no, new ExpiryCancel(no, ExpiryCancel.Kind.NOT_FOUND, 0, 0));
                        }
                        return out;
                      }));
            }))
        .onSuccess(result -> {
          long won = result.values().stream().filter(r -> r.kind() == ExpiryCancel.Kind.CANCELLED).count();
          if (won > 0) {
            metrics.transitions(source, OrderStatus.CANCELLED, (int) won);
            log.debug("{} order(s) PENDING_PAYMENT -> CANCELLED by {} ({})", won, source, actor);
          }
        });
  }

  /**
   * The conditional UPDATE; a loser reads the status it lost to. One that reads pending lost only
   * because the order's creation committed after the UPDATE began: it goes through the gate once more.
   */
  private Future<CancelResult> attempt(SqlConnection conn, String orderNo, TransitionSource source, String actor,
                                       String reference, boolean retried) {
    return conn.preparedQuery(Sql.CANCEL_ONE)
        .execute(Params.of(orderNo, source.name()))
        .compose(won -> won.rowCount() == 1
            ? effects.apply(conn, new CancellationEffects.Cancelled(
                    List.of(orderNo), List.of(actor), Collections.singletonList(reference)), source)
                .map(v -> new CancelResult(orderNo, CancelOutcome.CANCELLED, OrderStatus.CANCELLED))
            : hook.afterUpdate(conn)
                .compose(v -> conn.preparedQuery(Sql.ORDER_STATUS).execute(Params.of(orderNo)))
                .compose(rows -> {
                  CancelResult answer = loserAnswer(orderNo, rows);
                  if (answer != null) {
                    return Future.succeededFuture(answer);
                  }
                  if (retried) {
                    return Future.failedFuture(new IllegalStateException(
                        "order " + orderNo + " lost the gate twice but reads pending"));
                  }
                  return attempt(conn, orderNo, source, actor, reference, true);
                }));
  }

  /** The loser's answer; null when it reads pending (the UPDATE began before the order existed). */
  private static CancelResult loserAnswer(String orderNo, RowSet<Row> rows) {
    if (rows.size() == 0) {
      return new CancelResult(orderNo, CancelOutcome.NOT_FOUND, null);
    }
    OrderStatus status = OrderStatus.valueOf(rows.iterator().next().getString("status"));
    return switch (status) {
      case PAID -> new CancelResult(orderNo, CancelOutcome.ALREADY_PAID, status);
      case CANCELLED -> new CancelResult(orderNo, CancelOutcome.ALREADY_CANCELLED, status);
      case PENDING_PAYMENT -> null;
    };
  }
}
