package dev.ordergate.orders;

import dev.ordergate.db.Rows;
import dev.ordergate.db.Sql;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.Rejection;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import dev.ordergate.db.Params;

/** Stock and coupons: what admins set and everyone reads. */
public final class CatalogService {

  private final Pool pool;

  public CatalogService(Pool pool) {
    this.pool = pool;
  }

  /** Sets a SKU's stock; the difference goes to the ledger as SET in the same transaction. */
  public Future<JsonObject> setStock(String sku, int available, String actor) {
    return Tx.run(pool, conn -> conn.preparedQuery(Sql.ENSURE_STOCK_ROW).execute(Params.of(sku))
        .compose(v -> conn.preparedQuery(Sql.SET_STOCK).execute(Params.of(sku, available)))
        .compose(rows -> {
          int old = rows.iterator().next().getInteger("available");
          return conn.preparedQuery(Sql.LEDGER_SET).execute(Params.of(sku, available - old, actor));
        })
        .map(v -> new JsonObject().put("sku", sku).put("available", available)));
  }

  public Future<JsonObject> stock(String sku) {
    return pool.preparedQuery(Sql.SELECT_STOCK).execute(Params.of(sku)).map(rows -> {
      if (rows.size() == 0) {
        throw Rejection.notFound("sku " + sku);
      }
      return Rows.stock(rows.iterator().next());
    });
  }

  public Future<JsonObject> createCoupon(String code, String userId, long discountCents) {
    return pool.preparedQuery(Sql.INSERT_COUPON).execute(Params.of(code, userId, discountCents)).map(rows -> {
      if (rows.size() == 0) {
        throw new Rejection(409, "COUPON_EXISTS", "coupon " + code + " exists");
      }
      return Rows.coupon(rows.iterator().next());
    });
  }

  public Future<JsonObject> coupon(String code) {
    return pool.preparedQuery(Sql.SELECT_COUPON).execute(Params.of(code)).map(rows -> {
      if (rows.size() == 0) {
        throw Rejection.notFound("coupon " + code);
      }
      return Rows.coupon(rows.iterator().next());
    });
  }
}
