package dev.ordergate.db;

import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
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
    return pool.withTransaction(work).recover(err -> {
      if (n < ATTEMPTS && isRetryable(err)) {
        log.debug("transaction attempt {} aborted ({}), retrying", n, err.getMessage());
        return attempt(pool, work, n + 1);
      }
      return Future.failedFuture(err);
    });
  }

  public static boolean isRetryable(Throwable err) {
    return err instanceof PgException pg
        && ("40P01".equals(pg.getSqlState()) || "40001".equals(pg.getSqlState()));
  }

  public static boolean isUniqueViolation(Throwable err) {
    return err instanceof PgException pg && "23505".equals(pg.getSqlState());
  }
}
