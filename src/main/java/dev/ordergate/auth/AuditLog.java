package dev.ordergate.auth;

import dev.ordergate.db.ConsoleSql;
import dev.ordergate.db.Params;
import dev.ordergate.db.Rows;
import dev.ordergate.domain.Rejection;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

import java.time.OffsetDateTime;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The operator audit log: who did what, when, to what, and with which result. An action's row is
 * written before the action runs and completed after it, so an action is never unrecorded; a row
 * without a result says the process stopped while the action ran.
 */
public final class AuditLog {

  /** Filters of the list; null means any. */
  public record Filter(String operator, String action, String result, OffsetDateTime from, OffsetDateTime to) {}

  private static final int MAX_TEXT = 2000;

  private final Pool pool;

  public AuditLog(Pool pool) {
    this.pool = pool;
  }

  /**
   * Records {@code action} by {@code who} around {@code work}: the result is {@code outcome} of its
   * value ("OK" when that is null), or the refusal's code (a 4xx), or ERROR.
   */
  public <T> Future<T> record(Operator who, String action, String target, String detail,
                              Supplier<Future<T>> work, Function<T, String> outcome) {
    return pool.preparedQuery(ConsoleSql.AUDIT_BEGIN)
        .execute(Params.of(who.name(), who.via().name(), action, target, clip(detail), who.client()))
        .compose(rows -> {
          long id = rows.iterator().next().getLong("id");
          Future<T> done;
          try {
            done = work.get();
          } catch (RuntimeException e) {
            done = Future.failedFuture(e);
          }
          return done.transform(ar -> {
            String result;
            String message = null;
            if (ar.succeeded()) {
              String o = outcome == null ? null : outcome.apply(ar.result());
              result = o == null ? "OK" : o;
            } else if (ar.cause() instanceof Rejection r) {
              result = r.code();
              message = r.getMessage();
            } else {
              result = "ERROR";
              message = ar.cause().toString();
            }
            return pool.preparedQuery(ConsoleSql.AUDIT_FINISH).execute(Params.of(id, result, clip(message)))
                .transform(ignored -> ar.succeeded() ? Future.succeededFuture(ar.result())
                    : Future.<T>failedFuture(ar.cause()));
          });
        });
  }

  /** A finished entry (a login attempt from {@code client}). */
  public Future<Void> entry(String operator, String via, String action, String detail, String result, String message,
                            String client) {
    return pool.preparedQuery(ConsoleSql.AUDIT_ENTRY)
        .execute(Params.of(clip(operator), via, action, null, clip(detail), result, clip(message), client)).mapEmpty();
  }

  /** Newest first, ids below {@code cursor}; {@code limit} rows at most. */
  public Future<JsonArray> page(Filter f, Long cursor, int limit) {
    return pool.preparedQuery(ConsoleSql.AUDIT_PAGE)
        .execute(Params.of(f.operator(), f.action(), f.result(), f.from(), f.to(), cursor, limit))
        .map(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(r -> out.add(json(r)));
          return out;
        });
  }

  private static JsonObject json(Row r) {
    return new JsonObject()
        .put("id", r.getLong("id"))
        .put("at", Rows.instant(r.getOffsetDateTime("at")))
        .put("operator", r.getString("operator"))
        .put("via", r.getString("via"))
        .put("action", r.getString("action"))
        .put("target", r.getString("target"))
        .put("detail", r.getString("detail"))
        .put("result", r.getString("result"))
        .put("message", r.getString("message"))
        .put("client", r.getString("client"))
        .put("finishedAt", Rows.instant(r.getOffsetDateTime("finished_at")));
  }

  private static String clip(String s) {
    return s == null || s.length() <= MAX_TEXT ? s : s.substring(0, MAX_TEXT);
  }
}
