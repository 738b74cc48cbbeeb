package dev.ordergate.outbox;

import dev.ordergate.db.Rows;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

import java.time.OffsetDateTime;
import java.util.UUID;

/** A claimed outbox event. {@code id} is the Idempotency-Key the receiver sees on every attempt. */
public record OutboxEvent(UUID id, long seq, OutboxEventType type, String orderNo, JsonObject payload,
                          int attempts, OffsetDateTime createdAt) {

  public static OutboxEvent of(Row r) {
    return new OutboxEvent(r.getUUID("id"), r.getLong("seq"), OutboxEventType.valueOf(r.getString("type")),
        r.getString("order_no"), (JsonObject) r.getValue("payload"), r.getInteger("attempts"),
        r.getOffsetDateTime("created_at"));
  }

  /** What a webhook sink receives. */
  public JsonObject envelope() {
    return new JsonObject()
        .put("eventId", id.toString())
        .put("type", type.name())
        .put("orderNo", orderNo)
        .put("payload", payload)
        .put("createdAt", Rows.instant(createdAt));
  }

  /** What a channel's refundUrl receives: the refund id is the event id, the same on every retry. */
  public JsonObject refundRequest() {
    return new JsonObject()
        .put("refundId", id.toString())
        .put("channel", payload.getString("channel"))
        .put("txnId", payload.getString("txnId"))
        .put("orderNo", payload.getString("orderNo"))
        .put("amountCents", payload.getLong("amountCents"))
        .put("reason", payload.getString("reason"));
  }

  /** Admin listing shape. */
  public static JsonObject json(Row r) {
    Long exceptionId = r.getLong("exception_id");
    return new JsonObject()
        .put("id", r.getUUID("id").toString())
        .put("seq", r.getLong("seq"))
        .put("type", r.getString("type"))
        .put("orderNo", r.getString("order_no"))
        .put("payload", r.getValue("payload"))
        .put("status", r.getString("status"))
        .put("attempts", r.getInteger("attempts"))
        .put("nextAttemptAt", Rows.instant(r.getOffsetDateTime("next_attempt_at")))
        .put("lastError", r.getString("last_error"))
        .put("createdAt", Rows.instant(r.getOffsetDateTime("created_at")))
        .put("deliveredAt", Rows.instant(r.getOffsetDateTime("delivered_at")))
        .put("exceptionId", exceptionId);
  }
}
