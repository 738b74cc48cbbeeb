package dev.ordergate.payment;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

import java.time.OffsetDateTime;

/**
 * One row of {@code payment_attempts}. {@code state} is the stored state, or, when read through
 * {@code AttemptSql.READ_BY_ORDER}, the state derived from the order's payments and the trade's deadline;
 * {@code recordedState} is always the stored one.
 */
public record Attempt(long id, String orderNo, String channel, String kind, String gatewayReference, String state,
                      long amountCents, String currency, String clientField, String clientValue,
                      OffsetDateTime gatewayExpiresAt, OffsetDateTime createdAt, OffsetDateTime updatedAt,
                      OffsetDateTime closedAt, String paidTxnId, int closeFailures, OffsetDateTime closeFailingSince,
                      String lastCloseError, String recordedState) {

  public static Attempt of(Row r) {
    return new Attempt(r.getLong("id"), r.getString("order_no"), r.getString("channel"), r.getString("kind"),
        r.getString("gateway_reference"), r.getString("state"), r.getLong("amount_cents"), r.getString("currency"),
        r.getString("client_field"), r.getString("client_value"), r.getOffsetDateTime("gateway_expires_at"),
        r.getOffsetDateTime("created_at"), r.getOffsetDateTime("updated_at"), r.getOffsetDateTime("closed_at"),
        r.getString("paid_txn_id"), r.getInteger("close_failures"), r.getOffsetDateTime("close_failing_since"),
        r.getString("last_close_error"),
        r.getColumnIndex("recorded_state") >= 0 ? r.getString("recorded_state") : r.getString("state"));
  }

  /** The attempt as the API shows it; with {@code forClient}, also what the customer's app needs. */
  public JsonObject toJson(boolean forClient) {
    JsonObject o = new JsonObject().put("attemptId", id).put("orderNo", orderNo).put("channel", channel)
        .put("kind", kind).put("gatewayReference", gatewayReference).put("state", state).put("recordedState", recordedState)
        .put("amountCents", amountCents).put("currency", currency)
        .put("gatewayExpiresAt", gatewayExpiresAt.toInstant().toString())
        .put("createdAt", createdAt.toInstant().toString()).put("updatedAt", updatedAt.toInstant().toString())
        .put("closedAt", closedAt == null ? null : closedAt.toInstant().toString())
        .put("paidTxnId", paidTxnId).put("closeFailures", closeFailures)
        .put("closeFailingSince", closeFailingSince == null ? null : closeFailingSince.toInstant().toString())
        .put("lastCloseError", lastCloseError);
    if (forClient) {
      o.put(clientField, clientValue);
    }
    return o;
  }
}
