package dev.ordergate.reconcile;

import dev.ordergate.db.Params;
import dev.ordergate.db.ReconcileSql;
import dev.ordergate.db.Tx;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks every {@link Invariant} over the database, read only, in one REPEATABLE READ snapshot so
 * that the checks agree with each other while the service keeps running. Used by the
 * {@code reconcile} command, the drill, {@code GET /admin/reconcile} and the service's timer.
 */
public final class Reconciler {

  public static final int DEFAULT_LIMIT = 1000;

  private final Pool pool;
  private final int limitPerCheck;

  public Reconciler(Pool pool) {
    this(pool, DEFAULT_LIMIT);
  }

  public Reconciler(Pool pool, int limitPerCheck) {
    this.pool = pool;
    this.limitPerCheck = limitPerCheck;
  }

  public Future<ReconcileReport> run() {
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    return Tx.run(pool, conn -> conn.query(ReconcileSql.SNAPSHOT).execute()
            .compose(v -> conn.query(ReconcileSql.NO_STATEMENT_TIMEOUT).execute())
            .compose(v -> checkFrom(conn, 0, new ArrayList<>())))
        .map(checks -> new ReconcileReport(started, (System.nanoTime() - t0) / 1_000_000, List.copyOf(checks)));
  }

  private Future<List<CheckResult>> checkFrom(SqlConnection conn, int i, List<CheckResult> done) {
    Invariant[] all = Invariant.values();
    if (i == all.length) {
      return Future.succeededFuture(done);
    }
    return check(conn, all[i]).compose(result -> {
      done.add(result);
      return checkFrom(conn, i + 1, done);
    });
  }

  private Future<CheckResult> check(SqlConnection conn, Invariant inv) {
    Future<Boolean> present = inv.requiresTable() == null ? Future.succeededFuture(true)
        : conn.preparedQuery(ReconcileSql.TABLE_EXISTS).execute(Params.of(inv.requiresTable()))
            .map(rows -> rows.iterator().next().getBoolean("present"));
    return present.compose(yes -> {
      if (!yes) {
        return Future.succeededFuture(new CheckResult(inv, 0, List.of(), "table " + inv.requiresTable() + " does not exist"));
      }
      return conn.preparedQuery(ReconcileSql.limited(inv.sql())).execute(Params.of(limitPerCheck)).map(rows -> {
        List<Violation> list = new ArrayList<>();
        long total = 0;
        for (Row r : rows) {
          total = r.getLong("total");
          list.add(new Violation(inv, r.getString("order_no"), r.getString("sku"), r.getString("detail")));
        }
        return new CheckResult(inv, total, List.copyOf(list), null);
      });
    });
  }
}
