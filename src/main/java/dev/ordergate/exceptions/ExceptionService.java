package dev.ordergate.exceptions;

import dev.ordergate.db.ConsoleSql;
import dev.ordergate.db.ExceptionSql;
import dev.ordergate.db.Params;
import dev.ordergate.db.Rows;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.ExceptionKind;
import dev.ordergate.domain.Rejection;
import dev.ordergate.outbox.OutboxService;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;

import java.time.OffsetDateTime;

/** Reads exception orders with their history, and records an operator's resolution. */
public final class ExceptionService {

  private final Pool pool;

  public ExceptionService(Pool pool) {
    this.pool = pool;
  }

  /** Filters of the list; null means any. */
  public record Filter(ExceptionStatus status, ExceptionKind kind, String channel, OffsetDateTime from,
                       OffsetDateTime to, String orderNo) {}

  /**
   * Exceptions newest first, ids below {@code cursor}. {@code status} OPEN means every unresolved
   * exception (the stored OPEN never outlives its transaction); any other status matches exactly.
   */
  public Future<JsonArray> list(Filter f, Long cursor, int limit) {
    return pool.preparedQuery(ConsoleSql.EXCEPTION_PAGE)
        .execute(Params.of(statusFilter(f.status()), f.kind() == null ? null : f.kind().name(), f.channel(),
            f.from(), f.to(), f.orderNo(), cursor, limit))
        .map(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(r -> out.add(exception(r)));
          return out;
        });
  }

  /** The statuses a {@code status} filter matches, or null for all. */
  public static String[] statusFilter(ExceptionStatus status) {
    if (status == null) {
      return null;
    }
    return status == ExceptionStatus.OPEN
        ? ExceptionStatus.UNRESOLVED.stream().map(Enum::name).toArray(String[]::new)
        : new String[] {status.name()};
  }

  /** One exception with its history and its refund request(s). */
  public Future<JsonObject> get(long id) {
    return pool.preparedQuery(ExceptionSql.SELECT_EXCEPTION).execute(Params.of(id)).compose(rows -> {
      if (rows.size() == 0) {
        return Future.failedFuture(Rejection.notFound("exception " + id));
      }
      JsonObject ex = exception(rows.iterator().next());
      return pool.preparedQuery(ExceptionSql.SELECT_HISTORY).execute(Params.of(id))
          .map(history -> ex.put("history", history(history)))
          .compose(v -> pool.preparedQuery(ExceptionSql.SELECT_REFUND_EVENTS).execute(Params.of(id)))
          .map(events -> {
            JsonArray out = new JsonArray();
            events.forEach(e -> out.add(new JsonObject()
                .put("eventId", e.getUUID("id").toString())
                .put("status", e.getString("status"))
                .put("attempts", e.getInteger("attempts"))
                .put("lastError", e.getString("last_error"))
                .put("deliveredAt", Rows.instant(e.getOffsetDateTime("delivered_at")))));
            return out;
          })
          .compose(out -> OutboxService.withAttempts(pool, out, "eventId"))
          .map(out -> ex.put("refundRequests", out))
          .compose(v -> pool.preparedQuery(ConsoleSql.EXCEPTION_RECEIPT)
              .execute(Params.of(ex.getString("channel"), ex.getString("txnId"))))
          .map(receipts -> ex.put("receipt", receipts.size() == 0 ? null : Rows.receipt(receipts.iterator().next())))
          .compose(v -> pool.preparedQuery(ConsoleSql.TXN_NOTIFICATIONS)
              .execute(Params.of(ex.getString("channel"), ex.getString("txnId"))))
          .map(found -> {
            JsonArray notifications = new JsonArray();
            found.forEach(n -> notifications.add(Rows.notification(n)));
            return ex.put("notifications", notifications);
          });
    });
  }

  /** Resolves once: a second resolve, or one while a refund is in flight, is a 409. */
  public Future<JsonObject> resolve(long id, Resolution resolution, String operator, String note) {
    return Tx.run(pool, conn -> conn.preparedQuery(ExceptionSql.RESOLVE)
            .execute(Params.of(id, resolution.name(), operator, note))
            .compose(rows -> rows.size() == 1
                ? Future.<Void>succeededFuture()
                : conn.preparedQuery(ExceptionSql.STATUS).execute(Params.of(id)).compose(r -> refusal(id, r))))
        .compose(v -> get(id));
  }

  private static Future<Void> refusal(long id, RowSet<Row> rows) {
    if (rows.size() == 0) {
      return Future.failedFuture(Rejection.notFound("exception " + id));
    }
    ExceptionStatus status = ExceptionStatus.valueOf(rows.iterator().next().getString("status"));
    return Future.failedFuture(switch (status) {
      case REFUND_PENDING, REFUND_PROCESSING -> new Rejection(409, "REFUND_IN_PROGRESS",
          "a refund request is in flight; resolve after it is confirmed or has failed");
      default -> new Rejection(409, "ALREADY_RESOLVED", "exception is already closed (" + status + ")");
    });
  }

  /** The list and detail shape: the core's fields plus the lifecycle's. */
  public static JsonObject exception(Row r) {
    return Rows.exception(r)
        .put("updatedAt", Rows.instant(r.getOffsetDateTime("updated_at")))
        .put("resolution", r.getString("resolution"))
        .put("resolvedBy", r.getString("resolved_by"))
        .put("resolutionNote", r.getString("resolution_note"))
        .put("resolvedAt", Rows.instant(r.getOffsetDateTime("resolved_at")));
  }

  private static JsonArray history(RowSet<Row> rows) {
    JsonArray out = new JsonArray();
    for (Row h : rows) {
      out.add(new JsonObject()
          .put("event", h.getString("event"))
          .put("from", h.getString("from_status"))
          .put("to", h.getString("to_status"))
          .put("actor", h.getString("actor"))
          .put("detail", h.getString("detail"))
          .put("at", Rows.instant(h.getOffsetDateTime("at"))));
    }
    return out;
  }
}
