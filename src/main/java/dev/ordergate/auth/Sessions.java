package dev.ordergate.auth;

import dev.ordergate.config.ConsoleConfig;
import dev.ordergate.db.ConsoleSql;
import dev.ordergate.db.Params;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;

/**
 * Server-side operator sessions in the database: every instance sees the same ones, a restart keeps
 * them, logout or a timeout ends them everywhere. The browser holds a random token; the table holds
 * its SHA-256, the operator, the CSRF token, and a tag of the account's password hash (a changed
 * password or a removed account ends the session at its next request).
 */
public final class Sessions {

  /** A live session. */
  public record Session(String operator, String csrfToken, Instant expiresAt) {}

  /** A new session and the token for its cookie (shown once, never stored). */
  public record Created(String token, Session session) {}

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Pool pool;
  private final ConsoleConfig config;

  public Sessions(Pool pool, ConsoleConfig config) {
    this.pool = pool;
    this.config = config;
  }

  public ConsoleConfig config() {
    return config;
  }

  public Future<Created> create(OperatorAccount account) {
    String token = randomToken();
    String csrf = randomToken();
    return pool.preparedQuery(ConsoleSql.PRUNE).execute(Params.of(config.idleTimeoutSeconds()))
        .compose(v -> pool.preparedQuery(ConsoleSql.CREATE_SESSION).execute(Params.of(
            hash(token), account.name(), account.tag(), csrf, config.absoluteTimeoutSeconds())))
        .map(rows -> new Created(token, new Session(account.name(), csrf,
            rows.iterator().next().getOffsetDateTime("expires_at").toInstant())));
  }

  /**
   * The live session of {@code token}, or null. {@code activity} false (background polling) leaves
   * the idle clock running.
   */
  public Future<Session> find(String token, boolean activity) {
    return pool.preparedQuery(ConsoleSql.TOUCH_SESSION)
        .execute(Params.of(hash(token), config.idleTimeoutSeconds(), activity))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(null);
          }
          Row r = rows.iterator().next();
          OperatorAccount account = config.operators().get(r.getString("operator"));
          if (account == null || !account.tag().equals(r.getString("account_tag"))) {
            return end(token).map(v -> null);
          }
          return Future.succeededFuture(new Session(account.name(), r.getString("csrf_token"),
              r.getOffsetDateTime("expires_at").toInstant()));
        });
  }

  public Future<Void> end(String token) {
    return pool.preparedQuery(ConsoleSql.DELETE_SESSION).execute(Params.of(hash(token))).mapEmpty();
  }

  static String hash(String token) {
    return OperatorAccount.sha256(token);
  }

  private static String randomToken() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
