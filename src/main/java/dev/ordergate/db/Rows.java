package dev.ordergate.db;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

import java.time.OffsetDateTime;

/** Row mappers to the API's JSON shapes. Times are ISO-8601 UTC instants. */
public final class Rows {

  private Rows() {
  }

  public static String instant(OffsetDateTime t) {
    return t == null ? null : t.toInstant().toString();
  }

  public static JsonObject order(Row r) {
    Object items = r.getValue("items");
    return new JsonObject()
        .put("orderNo", r.getString("order_no"))
        .put("userId", r.getString("user_id"))
        .put("status", r.getString("status"))
        .put("amountCents", r.getLong("amount_cents"))
        .put("currency", r.getColumnIndex("currency") >= 0 ? r.getString("currency") : null)
        .put("items", items instanceof JsonArray a ? a : new JsonArray())
        .put("couponCode", r.getString("coupon_code"))
        .put("createdAt", instant(r.getOffsetDateTime("created_at")))
        .put("expiresAt", instant(r.getOffsetDateTime("expires_at")))
        .put("paidAt", instant(r.getOffsetDateTime("paid_at")))
        .put("cancelledAt", instant(r.getOffsetDateTime("cancelled_at")))
        .put("paidTxnId", r.getString("paid_txn_id"))
        .put("closedBy", r.getString("closed_by"));
  }

  public static JsonObject transition(Row r) {
    return new JsonObject()
        .put("from", r.getString("from_status"))
        .put("to", r.getString("to_status"))
        .put("source", r.getString("source"))
        .put("actor", r.getString("actor"))
        .put("reference", r.getString("reference"))
        .put("at", instant(r.getOffsetDateTime("at")));
  }

  public static JsonObject exception(Row r) {
    return new JsonObject()
        .put("id", r.getLong("id"))
        .put("orderNo", r.getString("order_no"))
        .put("kind", r.getString("kind"))
        .put("channel", r.getString("channel"))
        .put("txnId", r.getString("txn_id"))
        .put("amountCents", r.getLong("amount_cents"))
        .put("status", r.getString("status"))
        .put("createdAt", instant(r.getOffsetDateTime("created_at")));
  }

  /** A payment receipt: the (channel, txn id) key and its first answer. */
  public static JsonObject receipt(Row r) {
    return new JsonObject()
        .put("channel", r.getString("channel"))
        .put("txnId", r.getString("txn_id"))
        .put("amountCents", r.getLong("amount_cents"))
        .put("gatewayStatus", r.getString("gateway_status"))
        .put("outcome", r.getString("outcome"))
        .put("orderStatus", r.getString("order_status"))
        .put("receivedAt", instant(r.getOffsetDateTime("received_at")));
  }

  /** A verified gateway delivery (payment_notifications): the payload is the raw verified text. */
  public static JsonObject notification(Row r) {
    return new JsonObject()
        .put("channel", r.getString("channel"))
        .put("txnId", r.getString("txn_id"))
        .put("orderNo", r.getString("order_no"))
        .put("amountCents", r.getLong("amount_cents"))
        .put("gatewayStatus", r.getString("gateway_status"))
        .put("notificationId", r.getString("notification_id"))
        .put("payload", r.getString("payload"))
        .put("deliveries", r.getInteger("deliveries"))
        .put("firstAt", instant(r.getOffsetDateTime("first_at")))
        .put("lastAt", instant(r.getOffsetDateTime("last_at")));
  }

  public static JsonObject coupon(Row r) {
    return new JsonObject()
        .put("code", r.getString("code"))
        .put("status", r.getString("status"))
        .put("orderNo", r.getString("order_no"));
  }

  public static JsonObject stock(Row r) {
    return new JsonObject().put("sku", r.getString("sku")).put("available", r.getInteger("available"));
  }
}
