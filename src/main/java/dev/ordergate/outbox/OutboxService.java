package dev.ordergate.outbox;

import dev.ordergate.db.ConsoleSql;
import dev.ordergate.db.ExceptionSql;
import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Params;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.Rejection;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

import java.util.UUID;

/** The operator's view of the outbox: list by status, retry a dead event. */
public final class OutboxService {

  public enum Status { PENDING, DELIVERED, DEAD }

  private final Pool pool;
  private final OutboxSignal signal;

  public OutboxService(Pool pool, OutboxSignal signal) {
    this.pool = pool;
    this.signal = signal;
  }

  /** Newest first, {@code seq} below {@code cursor} (null: from the newest). */
  public Future<JsonArray> list(Status status, Long cursor, int limit) {
    var query = switch (status) {
      case DEAD -> pool.preparedQuery(ConsoleSql.DEAD_EVENT_PAGE).execute(Params.of(cursor, limit));
      case PENDING -> pool.preparedQuery(ConsoleSql.PENDING_EVENT_PAGE).execute(Params.of(cursor, limit));
      case DELIVERED -> pool.preparedQuery(ConsoleSql.EVENT_PAGE).execute(Params.of(status.name(), cursor, limit));
    };
    return query.compose(rows -> {
      JsonArray out = new JsonArray();
      rows.forEach(r -> out.add(OutboxEvent.json(r)));
      return withAttempts(pool, out, "id");
    });
  }

  /**
   * Adds to each event of {@code events} (its id under {@code idField}) its logged attempts as
   * {@code attemptLog}: attempt, relay, outcome, error, at (one query for all of them).
   */
  public static Future<JsonArray> withAttempts(Pool pool, JsonArray events, String idField) {
    if (events.isEmpty()) {
      return Future.succeededFuture(events);
    }
    UUID[] ids = events.stream().map(e -> UUID.fromString(((JsonObject) e).getString(idField))).toArray(UUID[]::new);
    return pool.preparedQuery(ConsoleSql.EVENT_ATTEMPTS).execute(Params.array(ids)).map(rows -> {
      java.util.Map<String, JsonArray> byEvent = new java.util.HashMap<>();
      rows.forEach(r -> byEvent.computeIfAbsent(r.getUUID("event_id").toString(), k -> new JsonArray())
          .add(new JsonObject().put("attempt", r.getInteger("attempt")).put("relay", r.getString("relay"))
              .put("outcome", r.getString("outcome")).put("error", r.getString("error"))
              .put("at", dev.ordergate.db.Rows.instant(r.getOffsetDateTime("at")))));
      events.forEach(e -> ((JsonObject) e).put("attemptLog",
          byEvent.getOrDefault(((JsonObject) e).getString(idField), new JsonArray())));
      return events;
    });
  }

  /**
   * Puts a DEAD event back to PENDING with fresh attempts. A dead refund request takes its
   * exception back from REFUND_FAILED to REFUND_PENDING in the same transaction; if the exception
   * was resolved meanwhile, the retry is refused (409) so a refund is never sent twice.
   */
  public Future<JsonObject> retry(UUID id, String operator) {
    return Tx.run(pool, conn -> conn.preparedQuery(OutboxSql.RETRY_DEAD).execute(Params.of(id)).compose(rows -> {
          if (rows.size() == 0) {
            return conn.preparedQuery(OutboxSql.SELECT_EVENT).execute(Params.of(id)).compose(found -> found.size() == 0
                ? Future.failedFuture(Rejection.notFound("outbox event " + id))
                : Future.failedFuture(new Rejection(409, "NOT_DEAD",
                    "only a DEAD event can be retried; this one is " + found.iterator().next().getString("status"))));
          }
          Row event = rows.iterator().next();
          Long exceptionId = event.getLong("exception_id");
          if (exceptionId == null) {
            return Future.succeededFuture(OutboxEvent.json(event));
          }
          return conn.preparedQuery(ExceptionSql.RETRY_REFUND).execute(Params.of(exceptionId, operator, id.toString()))
              .compose(ex -> ex.size() == 1
                  ? Future.succeededFuture(OutboxEvent.json(event))
                  : Future.failedFuture(new Rejection(409, "EXCEPTION_CLOSED",
                      "exception " + exceptionId + " is no longer REFUND_FAILED; the refund is not retried")));
        }))
        .onSuccess(v -> signal.signal());
  }
}
