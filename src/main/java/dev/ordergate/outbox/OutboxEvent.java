package dev.ordergate.outbox;

import dev.ordergate.db.Rows;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * A claimed outbox event. {@code id} is the Idempotency-Key the receiver sees on every attempt.
 * {@code payloadJson} is the payload as the database wrote it (its {@code jsonb} text): a webhook envelope
 * carries it as it is, so a delivery neither decodes nor re-encodes it (issue 13); {@link #payload()} decodes
 * it for the deliveries that read it (refunds, the broker tier).
 */
public record OutboxEvent(UUID id, long seq, OutboxEventType type, String orderNo, String payloadJson,
                          int attempts, OffsetDateTime createdAt) {

  /**
   * A row of a statement that answers the payload as text ({@code payload::text}: the relay's claim and log
   * statements, {@code RefundSql.DUE_QUERIES}): a jsonb value would reach here decoded, and a JSON string
   * decodes to a Java String that is not its own JSON text.
   */
  public static OutboxEvent of(Row r) {
    return new OutboxEvent(r.getUUID("id"), r.getLong("seq"), OutboxEventType.valueOf(r.getString("type")),
        r.getString("order_no"), r.getString("payload"), r.getInteger("attempts"), r.getOffsetDateTime("created_at"));
  }

  public JsonObject payload() {
    return new JsonObject(payloadJson);
  }

  /** What a webhook sink receives: eventId, type, orderNo, payload, createdAt. */
  public Buffer envelope() {
    Buffer body = Buffer.buffer(payloadJson.length() + 160);
    appendEnvelope(body);
    return body;
  }

  /** Appends {@link #envelope()} to {@code body} (a batch's array). */
  void appendEnvelope(Buffer body) {
    body.appendString("{\"eventId\":\"").appendString(id.toString())
        .appendString("\",\"type\":\"").appendString(type.name())
        .appendString("\",\"orderNo\":").appendString(Json.encode(orderNo))
        .appendString(",\"payload\":").appendString(payloadJson)
        .appendString(",\"createdAt\":").appendString(Json.encode(Rows.instant(createdAt)))
        .appendString("}");
  }

  /**
   * What a channel's refundUrl receives, from this event's {@link #payload()} decoded by the caller: the refund
   * id is the event id, the same on every retry.
   */
  public JsonObject refundRequest(JsonObject payload) {
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
