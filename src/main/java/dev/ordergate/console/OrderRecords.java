package dev.ordergate.console;

import dev.ordergate.db.ConsoleSql;
import dev.ordergate.db.Params;
import dev.ordergate.db.Rows;
import dev.ordergate.exceptions.ExceptionService;
import dev.ordergate.orders.OrderService;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

import java.util.List;

/**
 * The console's order reads: orders by txn id, and one order's whole record (the order and its
 * items, coupon, transition timeline, payment receipts, verified gateway notifications and
 * exception orders).
 */
public final class OrderRecords {

  private final Pool pool;
  private final OrderService orders;
  private final String[] channels;

  public OrderRecords(Pool pool, OrderService orders, List<String> channels) {
    this.pool = pool;
    this.orders = orders;
    this.channels = channels.toArray(String[]::new);
  }

  /** Orders a txn id touched (receipts or exceptions) on any configured channel, order numbers below {@code cursor}. */
  public Future<JsonArray> byTxnId(String txnId, String cursor, int limit) {
    return pool.preparedQuery(ConsoleSql.ORDERS_BY_TXN).execute(Params.of(channels, txnId, cursor, limit))
        .map(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(r -> out.add(Rows.order(r)));
          return out;
        });
  }

  public Future<JsonObject> record(String orderNo) {
    return orders.get(orderNo).compose(order -> orders.transitions(orderNo).map(t -> order.put("transitions", t)))
        .compose(order -> list(ConsoleSql.ORDER_RECEIPTS, orderNo, Rows::receipt)
            .map(receipts -> order.put("receipts", receipts)))
        .compose(order -> list(ConsoleSql.ORDER_EXCEPTIONS, orderNo, ExceptionService::exception)
            .map(exceptions -> order.put("exceptions", exceptions)))
        .compose(order -> list(ConsoleSql.ORDER_NOTIFICATIONS, orderNo, Rows::notification)
            .map(notifications -> order.put("notifications", notifications)))
        .compose(order -> order.getString("couponCode") == null ? Future.succeededFuture(order.putNull("coupon"))
            : list(ConsoleSql.ORDER_COUPON, order.getString("couponCode"), OrderRecords::coupon)
                .map(c -> order.put("coupon", c.isEmpty() ? null : c.getJsonObject(0))));
  }

  private Future<JsonArray> list(String sql, String key, java.util.function.Function<Row, JsonObject> mapper) {
    return pool.preparedQuery(sql).execute(Params.of(key)).map(rows -> {
      JsonArray out = new JsonArray();
      rows.forEach(r -> out.add(mapper.apply(r)));
      return out;
    });
  }

  private static JsonObject coupon(Row r) {
    return Rows.coupon(r)
        .put("userId", r.getString("user_id"))
        .put("discountCents", r.getLong("discount_cents"))
        .put("updatedAt", Rows.instant(r.getOffsetDateTime("updated_at")));
  }
}
