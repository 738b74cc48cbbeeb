package dev.ordergate.auth;

import dev.ordergate.config.ConsoleConfig;
import dev.ordergate.db.ConsoleSql;
import dev.ordergate.db.Params;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;

/**
 * Slows down password guessing per account name, in the database so every instance counts the same
 * failures: each attempt counts as a failure until it succeeds; past {@code admin.login.maxFailures}
 * consecutive failures the next attempt waits 30 s * 2^(n - max) (at most
 * {@code admin.login.lockoutMaxSeconds}) and is refused meanwhile without checking the password.
 */
public final class LoginThrottle {

  private final Pool pool;
  private final ConsoleConfig config;

  public LoginThrottle(Pool pool, ConsoleConfig config) {
    this.pool = pool;
    this.config = config;
  }

  /** 0 when the attempt may go ahead (and is now counted), else the seconds to wait. */
  public Future<Long> reserve(String name) {
    return pool.preparedQuery(ConsoleSql.RESERVE_ATTEMPT)
        .execute(Params.of(name, config.maxFailures(), (double) config.lockoutMaxSeconds()))
        .compose(rows -> rows.size() == 1 ? Future.succeededFuture(0L)
            : pool.preparedQuery(ConsoleSql.RETRY_AFTER)
                .execute(Params.of(name, config.maxFailures(), (double) config.lockoutMaxSeconds()))
                .map(r -> r.size() == 0 ? 1L : r.iterator().next().getLong("seconds")));
  }

  public Future<Void> succeeded(String name) {
    return pool.preparedQuery(ConsoleSql.CLEAR_FAILURES).execute(Params.of(name)).mapEmpty();
  }
}
