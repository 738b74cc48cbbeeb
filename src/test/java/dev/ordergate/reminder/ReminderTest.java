package dev.ordergate.reminder;

import dev.ordergate.db.DbUrl;
import dev.ordergate.support.TestApp;
import dev.ordergate.support.TestDatabase;
import dev.ordergate.sweep.SweepFixtures;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payment reminders by the database scan, with two service instances on one database: once per
 * order, none for paid or cancelled orders, none once the order expired, and a trigger that fires
 * at or after expiry changes no order.
 */
class ReminderTest {

  private static final String REMINDERS_SQL =
      "SELECT count(*) FROM outbox_events_shown WHERE type = 'NOTIFY_SMS' AND payload->>'template' = 'payment_reminder'";

  private static DbUrl db;
  private static TestApp one;
  private static TestApp two;

  @BeforeAll
  static void start() {
    db = TestDatabase.freshDatabase();
    JsonObject config = TestApp.baseConfig()
        .put("reminders", new JsonObject().put("beforeSeconds", 2).put("scanMs", 100).put("batchSize", 7))
        // Outbox relays off: the events stay in the table for the assertions.
        .put("outbox", new JsonObject().put("enabled", false));
    one = TestApp.start(config, db);
    two = TestApp.start(config, db);
  }

  @AfterAll
  static void stop() {
    two.close();
    one.close();
  }

  @BeforeEach
  void clean() {
    one.truncate();
    one.pool.query("TRUNCATE payment_reminders").execute().await();
    one.setStock("A", 1_000);
  }

  @Test
  void eachPendingOrderGetsExactlyOneReminderAcrossTwoInstances() {
    List<String> orderNos = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String no = "R" + i;
      orderNos.add(no);
      (i % 2 == 0 ? one : two).createOrder(order(no, "u" + i, null, "A", 1, 500).put("paymentTimeoutSeconds", 4));
    }
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(15),
        () -> one.count("SELECT count(*) FROM payment_reminders") == orderNos.size()));
    // Let both instances scan a few more times over the still-pending orders.
    sleep(600);
    for (String no : orderNos) {
      assertEquals(1, one.count("SELECT count(*) FROM payment_reminders WHERE order_no = $1", no), no);
    }
    assertEquals(List.of(), notExactlyOnce(orderNos), "one reminder event per order");
    assertEquals(orderNos.size(), one.count(REMINDERS_SQL));
    Row late = one.rows("SELECT max(sent_at - due_at) >= interval '0' AS ok, bool_and(sent_at < o.expires_at) AS before "
        + "FROM payment_reminders r JOIN orders o USING (order_no)").get(0);
    assertTrue(late.getBoolean("ok") && late.getBoolean("before"), "sent after the due time and before expiry");
    assertEquals(orderNos.size(), one.metric("ordergate.reminders.sent") + two.metric("ordergate.reminders.sent"));
    assertEquals(orderNos.size(), one.count("SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT'"),
        "a reminder changes no order");
  }

  @Test
  void paidAndCancelledOrdersGetNoReminder() {
    JsonObject paid = one.createOrder(order("PAID1", "u1", null, "A", 1, 700).put("paymentTimeoutSeconds", 4));
    one.createOrder(order("CANC1", "u2", null, "A", 1, 700).put("paymentTimeoutSeconds", 4));
    one.createOrder(order("PEND1", "u3", null, "A", 1, 700).put("paymentTimeoutSeconds", 4));
    one.callback(TestApp.payment("T-PAID1", "PAID1", paid.getLong("amountCents")));
    TestApp.expect(one.call(HttpMethod.POST, "/api/orders/CANC1/cancel", new JsonObject().put("userId", "u2"), false), 200);

    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10),
        () -> one.count("SELECT count(*) FROM payment_reminders WHERE order_no = 'PEND1'") == 1));
    sleep(500);
    assertEquals(1, one.count("SELECT count(*) FROM payment_reminders"));
    assertEquals(1, one.count(REMINDERS_SQL));
    assertEquals("PAID", one.getOrder("PAID1").getString("status"));
    assertEquals("CANCELLED", one.getOrder("CANC1").getString("status"));
  }

  @Test
  void aTriggerFiringAtOrAfterExpiryChangesNoOrder() {
    // A 1 s order with a 2 s lead was due at creation; stop both scans first so that none sends it
    // in time, then fire both kinds of trigger once the order has expired (the sweep is off).
    one.verticle.reminders().stop().await();
    two.verticle.reminders().stop().await();
    try {
      one.createOrder(order("EXP1", "u1", null, "A", 2, 900).put("paymentTimeoutSeconds", 1));
      assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10),
          () -> one.count("SELECT count(*) FROM orders WHERE order_no = 'EXP1' AND expires_at <= now()") == 1));
      String before = snapshot("EXP1");
      int stock = one.stock("A");

      int byScan = one.verticle.reminders().scanNow().await();
      int byEvent = two.verticle.reminders().remind(List.of("EXP1"), Reminders.Trigger.REDIS_EXPIRY).await();

      assertEquals(0, byScan + byEvent, "no reminder after expiry");
      assertEquals(before, snapshot("EXP1"), "the order, its transitions and its items are unchanged");
      assertEquals(stock, one.stock("A"));
      assertEquals(0, one.count("SELECT count(*) FROM payment_reminders"));
      assertEquals(0, one.count("SELECT count(*) FROM outbox_events_shown"));
      assertEquals("PENDING_PAYMENT", one.getOrder("EXP1").getString("status"));
    } finally {
      one.verticle.reminders().start().await();
      two.verticle.reminders().start().await();
    }
  }

  @Test
  void theOnceCheckCatchesACheckThenActTwin() {
    // The twin: read the due orders that have no reminder event yet, then write the events in a
    // second statement, from both instances at once. The check above must see its duplicates.
    one.verticle.reminders().stop().await();
    two.verticle.reminders().stop().await();
    try {
      List<String> orderNos = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        orderNos.add("TW" + i);
        one.createOrder(order("TW" + i, "u" + i, null, "A", 1, 500).put("paymentTimeoutSeconds", 3));
      }
      String due = "SELECT o.order_no FROM orders o WHERE o.status = 'PENDING_PAYMENT' AND o.expires_at > now() "
          + "AND o.expires_at <= now() + interval '2 seconds' AND NOT EXISTS (SELECT 1 FROM outbox_events_shown e "
          + "WHERE e.order_no = o.order_no AND e.payload->>'template' = 'payment_reminder')";
      assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10), () -> one.rows(due).size() == orderNos.size()));
      List<String> seenByOne = one.rows(due).stream().map(r -> r.getString(0)).toList();
      List<String> seenByTwo = two.rows(due).stream().map(r -> r.getString(0)).toList();
      for (List<String> seen : List.of(seenByOne, seenByTwo)) {
        for (String no : seen) {
          one.rows("INSERT INTO outbox_events (type, order_no, payload) VALUES ('NOTIFY_SMS', $1, "
              + "jsonb_build_object('template', 'payment_reminder', 'orderNo', $1::text)) RETURNING id", no);
        }
      }
      assertEquals(orderNos, notExactlyOnce(orderNos), "every order was reminded twice by the twin");
    } finally {
      one.verticle.reminders().start().await();
      two.verticle.reminders().start().await();
    }
  }

  /**
   * stop() is a barrier: it answers once the scan in flight has ended, so nothing is sent after it. The
   * scan is held on a lock of {@code payment_reminders} while stop() is asked; with a stop() that only
   * cancels the timer it answers at once, and a scan still running sends its reminder afterwards (what
   * made {@link #aTriggerFiringAtOrAfterExpiryChangesNoOrder} fail once in CI).
   */
  @Test
  void stopWaitsForTheScanInFlight() throws Exception {
    one.verticle.reminders().stop().await();
    two.verticle.reminders().stop().await();
    io.vertx.sqlclient.SqlConnection lock = one.pool.getConnection().await();
    try {
      one.createOrder(order("STOP1", "u1", null, "A", 1, 500).put("paymentTimeoutSeconds", 2));
      lock.query("BEGIN").execute().await();
      lock.query("LOCK TABLE payment_reminders IN ACCESS EXCLUSIVE MODE").execute().await();
      one.verticle.reminders().start().await();
      assertTrue(SweepFixtures.eventually(Duration.ofSeconds(5), () -> one.count(
          "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
          + "AND query LIKE '%payment_reminders%'") > 0),
          "a scan waits for the lock");
      io.vertx.core.Future<Void> stopping = one.verticle.reminders().stop();
      sleep(300);
      assertFalse(stopping.isComplete(), "stop() answered while a scan was still running");
      lock.query("COMMIT").execute().await();
      stopping.await();
      assertEquals(1, one.count("SELECT count(*) FROM payment_reminders WHERE order_no = 'STOP1'"),
          "the scan in flight sent its reminder before stop() answered");
      assertEquals(1, one.count(REMINDERS_SQL));
    } finally {
      lock.close().await();
      one.verticle.reminders().start().await();
      two.verticle.reminders().start().await();
    }
  }

  /** The orders among {@code orderNos} that do not have exactly one reminder event. */
  private static List<String> notExactlyOnce(List<String> orderNos) {
    return one.rows("SELECT x.no FROM unnest($1::text[]) AS x(no) WHERE (SELECT count(*) FROM outbox_events_shown e "
            + "WHERE e.order_no = x.no AND e.type = 'NOTIFY_SMS' AND e.payload->>'template' = 'payment_reminder') <> 1 "
            + "ORDER BY x.no", (Object) orderNos.toArray(String[]::new))
        .stream().map(r -> r.getString(0)).toList();
  }

  private static String snapshot(String orderNo) {
    return one.rows("SELECT (SELECT row_to_json(o)::text FROM orders o WHERE order_no = $1) || "
        + "(SELECT coalesce(json_agg(t ORDER BY id), '[]')::text FROM order_transitions t WHERE order_no = $1) || "
        + "(SELECT coalesce(json_agg(i ORDER BY sku), '[]')::text FROM order_items i WHERE order_no = $1)", orderNo)
        .get(0).getString(0);
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
