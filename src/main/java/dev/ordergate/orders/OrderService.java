package dev.ordergate.orders;

import dev.ordergate.db.Rows;
import dev.ordergate.db.Sql;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.NewOrder;
import dev.ordergate.domain.OrderStatus;
import dev.ordergate.domain.Rejection;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.metrics.Metrics;
import dev.ordergate.outbox.OutboxWriter;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import dev.ordergate.db.Params;

import java.security.SecureRandom;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * Creates and reads orders. Creation is one transaction: the order row (idempotent by order
 * number), a conditional take of every SKU's stock with its ledger rows, a conditional lock of the
 * coupon, the items and the creation transition; any refusal rolls all of it back.
 */
public final class OrderService {

  /** A created order, or the existing one when the same request was repeated. */
  public record Created(JsonObject order, boolean replayed) {}

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Pool pool;
  private final Metrics metrics;
  private final long defaultTimeoutSeconds;
  private final Consumer<JsonObject> onCreated;
  private final String currency;
  /** Non-null when the broker tier is on: creation writes the order's ORDER_TIMEOUT event. */
  private final OutboxWriter timeoutMessages;

  /** {@code onCreated} sees each newly created order after commit (the precise sweep re-arms on it). */
  public OrderService(Pool pool, Metrics metrics, long defaultTimeoutSeconds, Consumer<JsonObject> onCreated) {
    this(pool, metrics, defaultTimeoutSeconds, onCreated, "CNY", null);
  }

  /**
   * Orders are created in {@code currency} ({@code orders.currency}, ISO 4217); with {@code timeoutMessages},
   * each creation also schedules its timeout message through the outbox.
   */
  public OrderService(Pool pool, Metrics metrics, long defaultTimeoutSeconds, Consumer<JsonObject> onCreated,
                      String currency, OutboxWriter timeoutMessages) {
    this.currency = currency;
    this.pool = pool;
    this.metrics = metrics;
    this.defaultTimeoutSeconds = defaultTimeoutSeconds;
    this.onCreated = onCreated;
    this.timeoutMessages = timeoutMessages;
  }

  public Future<Created> create(NewOrder req) {
    String orderNo = req.orderNo() != null ? req.orderNo() : newOrderNo();
    long timeout = req.paymentTimeoutSeconds() != null ? req.paymentTimeoutSeconds() : defaultTimeoutSeconds;
    long gross;
    try {
      gross = req.grossCents();
    } catch (ArithmeticException overflow) {
      return Future.failedFuture(Rejection.badRequest("order total is too large"));
    }
    String hash = req.requestHash();
    return Tx.run(pool, conn -> conn.preparedQuery(Sql.INSERT_ORDER)
            .execute(Params.of(orderNo, req.userId(), gross, req.couponCode(), hash, timeout, currency))
            .compose(inserted -> inserted.rowCount() == 0
                ? sameRequestOrConflict(conn, orderNo, hash)
                : takeStock(conn, orderNo, req)
                    .compose(v -> lockCoupon(conn, orderNo, req))
                    .compose(v -> insertItems(conn, orderNo, req))
                    .compose(v -> conn.preparedQuery(Sql.TRANSITION_CREATED).execute(Params.of(
                        orderNo, TransitionSource.USER.name(), req.userId(), "create")))
                    .compose(v -> timeoutMessages == null ? Future.<Void>succeededFuture()
                        : timeoutMessages.timeoutScheduled(conn, orderNo))
                    .map(v -> Boolean.FALSE)))
        .compose(replayed -> get(orderNo).map(order -> new Created(order, replayed)))
        .onSuccess(created -> {
          if (!created.replayed()) {
            metrics.transitions(TransitionSource.USER, OrderStatus.PENDING_PAYMENT, 1);
            onCreated.accept(created.order());
          }
        });
  }

  private static Future<Boolean> sameRequestOrConflict(SqlConnection conn, String orderNo, String hash) {
    return conn.preparedQuery(Sql.ORDER_REQUEST_HASH).execute(Params.of(orderNo)).map(rows -> {
      if (rows.size() == 1 && hash.equals(rows.iterator().next().getString("request_hash"))) {
        return Boolean.TRUE;
      }
      throw new Rejection(409, "ORDER_NO_CONFLICT", "order " + orderNo + " exists with a different request");
    });
  }

  private static Future<Void> takeStock(SqlConnection conn, String orderNo, NewOrder req) {
    TreeMap<String, Integer> bySku = new TreeMap<>();
    req.items().forEach(i -> bySku.merge(i.sku(), i.qty(), Integer::sum));
    String[] skus = bySku.keySet().toArray(String[]::new);
    Integer[] qtys = bySku.values().toArray(Integer[]::new);
    return conn.preparedQuery(Sql.LOCK_STOCK).execute(Params.array(skus))
        .compose(v -> conn.preparedQuery(Sql.TAKE_STOCK).execute(Params.of(skus, qtys)))
        .compose(taken -> {
          if (taken.rowCount() != skus.length) {
            Set<String> got = new HashSet<>();
            taken.forEach(r -> got.add(r.getString("sku")));
            String shortSku = bySku.keySet().stream().filter(s -> !got.contains(s)).findFirst().orElse("?");
            return Future.failedFuture(new Rejection(409, "OUT_OF_STOCK", "not enough stock for sku " + shortSku));
          }
          return conn.preparedQuery(Sql.LEDGER_TAKE).execute(Params.of(orderNo, req.userId(), skus, qtys)).mapEmpty();
        });
  }

  private static Future<Void> lockCoupon(SqlConnection conn, String orderNo, NewOrder req) {
    if (req.couponCode() == null) {
      return Future.succeededFuture();
    }
    return conn.preparedQuery(Sql.LOCK_COUPON).execute(Params.of(req.couponCode(), orderNo, req.userId()))
        .compose(locked -> locked.rowCount() == 1 ? Future.<Void>succeededFuture() : Future.failedFuture(
            new Rejection(409, "COUPON_UNAVAILABLE", "coupon " + req.couponCode() + " is not available to this user")));
  }

  private static Future<Void> insertItems(SqlConnection conn, String orderNo, NewOrder req) {
    List<NewOrder.Item> items = req.items();
    return conn.preparedQuery(Sql.INSERT_ITEMS).execute(Params.of(orderNo,
            items.stream().map(NewOrder.Item::sku).toArray(String[]::new),
            items.stream().map(NewOrder.Item::qty).toArray(Integer[]::new),
            items.stream().map(NewOrder.Item::unitPriceCents).toArray(Long[]::new)))
        .mapEmpty();
  }

  public Future<JsonObject> get(String orderNo) {
    return pool.preparedQuery(Sql.SELECT_ORDER).execute(Params.of(orderNo)).map(rows -> {
      if (rows.size() == 0) {
        throw Rejection.notFound("order " + orderNo);
      }
      return Rows.order(rows.iterator().next());
    });
  }

  public Future<JsonArray> transitions(String orderNo) {
    return pool.preparedQuery(Sql.SELECT_TRANSITIONS).execute(Params.of(orderNo)).compose(rows -> {
      if (rows.size() == 0) {
        return pool.preparedQuery(Sql.ORDER_STATUS).execute(Params.of(orderNo)).map(r -> {
          if (r.size() == 0) {
            throw Rejection.notFound("order " + orderNo);
          }
          return new JsonArray();
        });
      }
      JsonArray out = new JsonArray();
      for (Row r : rows) {
        out.add(Rows.transition(r));
      }
      return Future.succeededFuture(out);
    });
  }

  private static String newOrderNo() {
    return "OG" + Long.toString(System.currentTimeMillis(), 36).toUpperCase()
        + Long.toString(RANDOM.nextLong() & Long.MAX_VALUE, 36).toUpperCase();
  }
}
