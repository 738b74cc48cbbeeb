package dev.ordergate.db;

import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.TransactionRollbackException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Function;

/**
 * Runs a unit of work in one transaction, retrying it whole when PostgreSQL aborted it for a
 * deadlock or a serialization failure: both leave nothing written, so a retry is safe.
 */
public final class Tx {

  private static final Logger log = LoggerFactory.getLogger(Tx.class);
  private static final int ATTEMPTS = 4;

  private Tx() {
  }

  public static <T> Future<T> run(Pool pool, Function<SqlConnection, Future<T>> work) {
    return attempt(pool, work, 1);
  }

  private static <T> Future<T> attempt(Pool pool, Function<SqlConnection, Future<T>> work, int n) {
    return pool.getConnection().compose(conn -> inTransaction(conn, work).eventually(conn::close)).recover(err -> {
      if (n < ATTEMPTS && isRetryable(err)) {
        log.debug("transaction attempt {} aborted ({}), retrying", n, err.getMessage());
        return attempt(pool, work, n + 1);
      }
      return Future.failedFuture(err);
    });
  }

  /**
   * The work in one transaction on {@code conn}, with {@code BEGIN} sent together with the work's first
   * statement: the client queues the work's commands behind {@code BEGIN} on the connection (pipelining), so
   * the transaction costs one round trip fewer than {@code Pool.withTransaction}, which waits for
   * {@code BEGIN}'s answer before it starts the work. Under load that wait was spent idle in transaction on
   * the database's side (issue 13: 0.15 to 0.27 of the gate's backends at any moment at 3,000 callbacks/s).
   * Commit and rollback are as {@code withTransaction} does them: commit after the work succeeded, else
   * roll back and fail with the work's error.
   */
  static <T> Future<T> inTransaction(SqlConnection conn, Function<SqlConnection, Future<T>> work) {
    Future<Transaction> begun = conn.begin();
    Future<T> done;
    try {
      done = work.apply(conn);
    } catch (RuntimeException e) {
      done = Future.failedFuture(e);
    }
    Future<T> result = done;
    return begun.compose(tx -> result.compose(
        value -> tx.commit().map(value),
        err -> err instanceof TransactionRollbackException
            ? Future.failedFuture(err)
            : tx.rollback().transform(ignored -> Future.<T>failedFuture(err))));
  }

  public static boolean isRetryable(Throwable err) {
    return err instanceof PgException pg
        && ("40P01".equals(pg.getSqlState()) || "40001".equals(pg.getSqlState()));
  }

  public static boolean isUniqueViolation(Throwable err) {
    return err instanceof PgException pg && "23505".equals(pg.getSqlState());
  }
}
