package dev.ordergate.tools;

import dev.ordergate.db.Params;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancellationEffects;
import dev.ordergate.outbox.OutboxSignal;
import dev.ordergate.outbox.OutboxWriter;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;

import java.util.Collections;
import java.util.List;

/**
 * The broken build the drill must catch: cancel by reading the status, then, after a pause (as a
 * remote call would make), updating by primary key and applying the real cancellation effects.
 * Check-then-act: two writers can both see PENDING_PAYMENT and both act.
 */
final class CheckThenActCancel implements Drill.Canceller {

  private final Vertx vertx;
  private final Pool pool;
  private final CancellationEffects effects = new CancellationEffects(new OutboxWriter(new OutboxSignal()));

  CheckThenActCancel(Vertx vertx, Pool pool) {
    this.vertx = vertx;
    this.pool = pool;
  }

  @Override
  public Future<Drill.CancelAnswer> cancel(String orderNo, String userId, TransitionSource source) {
    return pool.preparedQuery("SELECT status FROM orders WHERE order_no = $1").execute(Params.of(orderNo))
        .compose(rows -> {
          String status = rows.iterator().next().getString(0);
          if ("PAID".equals(status)) {
            return Future.succeededFuture(new Drill.CancelAnswer(409, "ALREADY_PAID"));
          }
          if ("CANCELLED".equals(status)) {
            return Future.succeededFuture(new Drill.CancelAnswer(200, "ALREADY_CANCELLED"));
          }
          return vertx.timer(30).compose(t -> Tx.run(pool, conn -> conn
                  .preparedQuery("UPDATE orders SET status = 'CANCELLED', cancelled_at = now(), closed_by = $2 WHERE order_no = $1")
                  .execute(Params.of(orderNo, source.name()))
                  .compose(v -> effects.apply(conn, new CancellationEffects.Cancelled(List.of(orderNo),
                      List.of(userId), Collections.singletonList("check-then-act")), source))))
              .map(v -> new Drill.CancelAnswer(200, "CANCELLED"));
        });
  }

  /** Simulates a naive schema: without the database's own safety nets the broken cancel corrupts instead of failing. */
  static void removeSafetyNets(Pool pool) {
    pool.query("DROP INDEX order_transitions_one_exit").execute().await();
    pool.query("""
        DO $$
        DECLARE c record;
        BEGIN
          FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'orders'::regclass AND contype = 'c'
                     AND (pg_get_constraintdef(oid) LIKE '%paid_at%' OR pg_get_constraintdef(oid) LIKE '%cancelled_at%')
          LOOP
            EXECUTE format('ALTER TABLE orders DROP CONSTRAINT %I', c.conname);
          END LOOP;
        END $$""").execute().await();
  }
}
