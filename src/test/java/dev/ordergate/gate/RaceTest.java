package dev.ordergate.gate;

import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import dev.ordergate.support.Sandbox;
import dev.ordergate.tools.ServiceClient;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 100 pairs of (cancel, SUCCESS callback) fired at the same instant on 100 orders. Every order
 * must end in exactly one terminal state with stock, coupons and money right. The same race run
 * against a check-then-act cancel (below, in the test sources) must show the anomaly: that is the
 * proof the check can fail.
 */
class RaceTest {

  private static final Logger log = LoggerFactory.getLogger(RaceTest.class);
  private static final int ORDERS = 100;
  private static final int INITIAL_STOCK = 1_000;
  private static final int QTY = 3;
  private static final long PRICE = 700;

  /** Once per channel kind: the gate behind each gateway's own wire format (the simulator builds them). */
  @ParameterizedTest
  @ValueSource(strings = {TestApp.CHANNEL, Sandbox.WECHATPAY, Sandbox.ALIPAY, Sandbox.STRIPE})
  void cancelAndCallbackRacingOnTheSameOrdersLeaveOneTerminalStateEach(String channel) {
    try (TestApp app = TestApp.start(Sandbox.config())) {
      List<String> anomalies = race(app, channel, orderNo -> app.callAsync(HttpMethod.POST,
          "/api/orders/" + orderNo + "/cancel", null, false).map(r -> r.statusCode()));
      assertEquals(List.of(), anomalies);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {TestApp.CHANNEL, Sandbox.WECHATPAY, Sandbox.ALIPAY, Sandbox.STRIPE})
  void theSameRaceCatchesACheckThenActCancel(String channel) {
    try (TestApp app = TestApp.start(Sandbox.config())) {
      removeSafetyNets(app);
      CheckThenActCancel broken = new CheckThenActCancel(app.vertx, app.pool);
      List<String> anomalies = race(app, channel, broken::cancel);
      log.info("check-then-act cancel produced {} anomalies, e.g. {}", anomalies.size(),
          anomalies.subList(0, Math.min(3, anomalies.size())));
      assertFalse(anomalies.isEmpty(), "the race check must detect a check-then-act cancel");
      assertTrue(anomalies.stream().anyMatch(a -> a.contains("APPLIED but order is CANCELLED")), anomalies.toString());
    }
  }

  /** Runs the race and returns every violated invariant, one line each. */
  private static List<String> race(TestApp app, String channel, Function<String, Future<?>> cancel) {
    try (ServiceClient client = new ServiceClient(app.vertx, Sandbox.target(app, channel), 64, 30_000)) {
      return race(app, client, cancel);
    }
  }

  private static List<String> race(TestApp app, ServiceClient client, Function<String, Future<?>> cancel) {
    app.setStock("SKU", INITIAL_STOCK);
    List<String> orderNos = new ArrayList<>();
    for (int i = 0; i < ORDERS; i++) {
      String orderNo = "R" + i;
      String coupon = i % 2 == 0 ? "CP" + i : null;
      if (coupon != null) {
        app.createCoupon(coupon, "u" + i, 100);
      }
      app.createOrder(order(orderNo, "u" + i, coupon, "SKU", QTY, PRICE));
      orderNos.add(orderNo);
    }
    Map<String, Long> amounts = new HashMap<>();
    for (Row r : app.rows("SELECT order_no, amount_cents FROM orders")) {
      amounts.put(r.getString(0), r.getLong(1));
    }
    // Notifications are built (signed, encrypted) and the client's connections opened before the
    // race, so neither side starts with a handicap the other does not have.
    List<java.util.function.Supplier<Future<ServiceClient.PayAnswer>>> notifications = new ArrayList<>();
    for (int i = 0; i < ORDERS; i++) {
      notifications.add(client.payment("TX" + i, orderNos.get(i), amounts.get(orderNos.get(i))));
    }
    List<Future<?>> warm = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      warm.add(client.send(HttpMethod.GET, "/health/live", null, false));
    }
    Future.join(warm).await();
    // Fire every pair together; alternate which one leaves first so both sides win some orders.
    List<Future<?>> cancels = new ArrayList<>();
    Map<String, Future<JsonObject>> callbacks = new HashMap<>();
    for (int i = 0; i < ORDERS; i++) {
      String orderNo = orderNos.get(i);
      Future<JsonObject> cb;
      var notification = notifications.get(i);
      if (i % 2 == 0) {
        cancels.add(cancel.apply(orderNo));
        cb = notification.get().map(RaceTest::outcome);
      } else {
        cb = notification.get().map(RaceTest::outcome);
        cancels.add(cancel.apply(orderNo));
      }
      callbacks.put(orderNo, cb);
    }
    Future.join(new ArrayList<>(callbacks.values())).otherwiseEmpty().await();
    Future.join(cancels).otherwiseEmpty().await();
    return invariants(app, orderNos, callbacks);
  }

  /** The outcome a channel's success answer carried, or null when the answer was not its success answer. */
  private static JsonObject outcome(ServiceClient.PayAnswer a) {
    return new JsonObject().put("outcome", a.accepted() ? a.outcome() : null).put("http", a.status());
  }

  private static List<String> invariants(TestApp app, List<String> orderNos, Map<String, Future<JsonObject>> callbacks) {
    List<String> anomalies = new ArrayList<>();
    Map<String, Row> orders = new HashMap<>();
    app.rows("SELECT order_no, status, paid_txn_id, coupon_code FROM orders").forEach(r -> orders.put(r.getString(0), r));
    int paidQty = 0;
    int paid = 0;
    for (String orderNo : orderNos) {
      Row o = orders.get(orderNo);
      String status = o.getString("status");
      if (!status.equals("PAID") && !status.equals("CANCELLED")) {
        anomalies.add(orderNo + ": not terminal (" + status + ")");
      }
      if (status.equals("PAID")) {
        paidQty += QTY;
        paid++;
      }
      long exits = app.count("SELECT count(*) FROM order_transitions WHERE order_no = $1 AND from_status = 'PENDING_PAYMENT'", orderNo);
      if (exits != 1) {
        anomalies.add(orderNo + ": " + exits + " transitions out of PENDING_PAYMENT");
      }
      Future<JsonObject> cb = callbacks.get(orderNo);
      if (cb.failed() || cb.result() == null || cb.result().getString("outcome") == null) {
        anomalies.add(orderNo + ": callback not answered with an outcome: " + (cb.failed() ? cb.cause() : cb.result()));
        continue;
      }
      String outcome = cb.result().getString("outcome");
      String txn = "TX" + orderNo.substring(1);
      if (outcome.equals("APPLIED")) {
        if (!status.equals("PAID") || !txn.equals(o.getString("paid_txn_id"))) {
          anomalies.add(orderNo + ": callback APPLIED but order is " + status + " (money kept, no order)");
        }
      } else if (outcome.equals("LATE_AFTER_CANCEL")) {
        if (app.count("SELECT count(*) FROM exception_orders WHERE txn_id = $1", txn) != 1) {
          anomalies.add(orderNo + ": LATE_AFTER_CANCEL without an exception order");
        }
        if (!status.equals("CANCELLED")) {
          anomalies.add(orderNo + ": LATE_AFTER_CANCEL but order is " + status);
        }
      } else {
        anomalies.add(orderNo + ": unexpected callback outcome " + outcome);
      }
      String coupon = o.getString("coupon_code");
      if (coupon != null) {
        String expected = status.equals("PAID") ? "USED" : "AVAILABLE";
        String actual = app.couponStatus(coupon);
        if (!expected.equals(actual)) {
          anomalies.add(orderNo + ": coupon " + coupon + " is " + actual + ", expected " + expected);
        }
      }
    }
    int stock = app.stock("SKU");
    if (stock != INITIAL_STOCK - paidQty) {
      anomalies.add("stock is " + stock + ", expected " + (INITIAL_STOCK - paidQty) + " (initial minus paid)");
    }
    log.info("race over {} orders: {} paid, {} cancelled, {} anomalies", orderNos.size(), paid,
        orderNos.size() - paid, anomalies.size());
    return anomalies;
  }

  /** Simulates a naive schema: without the database's own safety nets the broken cancel corrupts instead of failing. */
  private static void removeSafetyNets(TestApp app) {
    app.pool.query("DROP INDEX order_transitions_one_exit").execute().await();
    for (Row r : app.rows("SELECT conname FROM pg_constraint WHERE conrelid = 'orders'::regclass AND contype = 'c' "
        + "AND (pg_get_constraintdef(oid) LIKE '%paid_at%' OR pg_get_constraintdef(oid) LIKE '%cancelled_at%')")) {
      app.pool.query("ALTER TABLE orders DROP CONSTRAINT " + r.getString(0)).execute().await();
    }
  }

  /**
   * The bug this project exists to prevent: read the status, then update by primary key. The
   * pause stands for whatever a real service does between the two (a remote call, a GC pause):
   * it lasts until the racing payment has committed, at most half a second, so the interleaving
   * that breaks check-then-act happens whatever the machine's speed.
   */
  static final class CheckThenActCancel {
    private final Vertx vertx;
    private final Pool pool;

    CheckThenActCancel(Vertx vertx, Pool pool) {
      this.vertx = vertx;
      this.pool = pool;
    }

    Future<String> cancel(String orderNo) {
      return pool.preparedQuery("SELECT status FROM orders WHERE order_no = $1").execute(Tuple.of(orderNo))
          .compose(rows -> {
            if (!"PENDING_PAYMENT".equals(rows.iterator().next().getString(0))) {
              return Future.succeededFuture("NOT_PENDING");
            }
            return untilPaid(orderNo, System.currentTimeMillis() + 500).compose(t -> pool.withTransaction(conn -> conn
                .preparedQuery("UPDATE orders SET status = 'CANCELLED', cancelled_at = now() WHERE order_no = $1")
                .execute(Tuple.of(orderNo))
                .compose(v -> conn.preparedQuery("UPDATE inventory i SET available = i.available + oi.qty "
                    + "FROM order_items oi WHERE oi.order_no = $1 AND i.sku = oi.sku").execute(Tuple.of(orderNo)))
                .compose(v -> conn.preparedQuery("UPDATE coupons SET status = 'AVAILABLE', order_no = NULL "
                    + "WHERE order_no = $1").execute(Tuple.of(orderNo)))
                .compose(v -> conn.preparedQuery("INSERT INTO order_transitions (order_no, from_status, to_status, source) "
                    + "VALUES ($1, 'PENDING_PAYMENT', 'CANCELLED', 'USER')").execute(Tuple.of(orderNo)))
                .map("CANCELLED")));
          });
    }

    private Future<Void> untilPaid(String orderNo, long deadline) {
      return pool.preparedQuery("SELECT status FROM orders WHERE order_no = $1").execute(Tuple.of(orderNo))
          .compose(rows -> "PAID".equals(rows.iterator().next().getString(0)) || System.currentTimeMillis() > deadline
              ? Future.<Void>succeededFuture()
              : vertx.timer(5).compose(t -> untilPaid(orderNo, deadline)));
    }
  }
}
