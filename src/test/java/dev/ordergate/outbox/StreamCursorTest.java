package dev.ordergate.outbox;

import dev.ordergate.config.OutboxConfig;
import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Params;
import dev.ordergate.support.TestApp;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13 (V18): the log sink delivers STREAM events by a cursor, a position in {@code (tx, seq)} order, and
 * never updates them. Each event is logged once while no relay dies, each order's events in seq order, also
 * when an order's events come in the other order by xid; the readers (the pending view, the shown status)
 * and the retention see the position.
 */
class StreamCursorTest {

  private static TestApp app;
  private final List<String> relays = new ArrayList<>();

  @BeforeAll
  static void start() {
    app = TestApp.startWithoutRelay();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @BeforeEach
  void clean() {
    app.truncate();
  }

  @AfterEach
  void undeploy() {
    relays.forEach(id -> app.vertx.undeploy(id).await());
    relays.clear();
  }

  private void deployRelay(String name, int batchSize, double retentionHours, long pruneIntervalMs) {
    OutboxConfig config = new OutboxConfig(true, 100, batchSize, 5, 20, 1_000, 60_000, 5_000, Map.of(),
        retentionHours, pruneIntervalMs, 2, Map.of());
    relays.add(app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(),
        app.verticle.outboxMetrics(), app.verticle.outboxSignal(), name)).await());
  }

  /** A STREAM event of {@code type} for {@code orderNo} on {@code conn} (in its transaction, if one is open). */
  private static void insert(SqlConnection conn, String type, String orderNo) {
    conn.query("INSERT INTO outbox_events (type, order_no, payload, status) VALUES ('" + type + "', '" + orderNo
        + "', '{}', 'STREAM')").execute().await();
  }

  private static long xid(SqlConnection conn) {
    return conn.query("SELECT pg_current_xact_id()::text::bigint").execute().await().iterator().next().getLong(0);
  }

  private long undelivered() {
    return app.count("SELECT count(*) FROM outbox_events_shown WHERE status <> 'DELIVERED'");
  }

  /** Each event logged once, each order's in seq order. */
  private void assertLoggedOnceInOrder(List<SinkLines.Line> lines) {
    Map<String, Long> seqOf = new HashMap<>();
    app.rows("SELECT id::text, seq FROM outbox_events").forEach(r -> seqOf.put(r.getString(0), r.getLong(1)));
    assertEquals(seqOf.size(), lines.size(), "every event logged, once");
    assertEquals(seqOf.keySet(), new java.util.HashSet<>(lines.stream().map(SinkLines.Line::eventId).toList()));
    Map<String, List<Long>> byOrder = new HashMap<>();
    lines.forEach(l -> byOrder.computeIfAbsent(l.orderNo(), k -> new ArrayList<>()).add(seqOf.get(l.eventId())));
    byOrder.forEach((orderNo, seqs) -> assertEquals(seqs.stream().sorted().toList(), seqs, orderNo + ": in seq order"));
  }

  /**
   * A service whose sinks all go to the log (as shipped) writes its events as STREAM, and its relay logs them
   * and moves the position without updating them; they show as DELIVERED with a delivery time.
   */
  @Test
  void aServiceAsShippedWritesItsEventsForTheCursorAndLogsEachOnce() {
    TestApp shipped = TestApp.start();
    try (SinkLines sink = new SinkLines()) {
      shipped.setStock("A", 100);
      for (int i = 0; i < 20; i++) {
        shipped.createOrder(order("S" + i, "u1", null, "A", 1, 500));
        assertEquals("APPLIED", shipped.callback(payment("TS" + i, "S" + i, 500)).getString("outcome"));
      }
      assertEquals(40, shipped.count("SELECT count(*) FROM outbox_events WHERE status = 'STREAM'"),
          "written for the cursor, and never updated");
      eventually("every event is delivered",
          () -> shipped.count("SELECT count(*) FROM outbox_events_shown WHERE status <> 'DELIVERED'") == 0);
      assertEquals(40, shipped.count("SELECT count(*) FROM outbox_events WHERE status = 'STREAM'"));
      assertEquals(0, shipped.count("SELECT count(*) FROM outbox_events_shown "
          + "WHERE delivered_at IS NULL OR delivered_at < created_at OR attempts <> 1"));
      assertEquals(0, shipped.count("SELECT count(*) FROM outbox_pending"));
      List<SinkLines.Line> lines = sink.lines().stream().filter(l -> l.orderNo().startsWith("S")).toList();
      assertEquals(40, lines.size());
      Map<String, List<String>> types = new HashMap<>();
      lines.forEach(l -> types.computeIfAbsent(l.orderNo(), k -> new ArrayList<>()).add(l.type()));
      types.forEach((orderNo, t) -> assertEquals(List.of("ORDER_PAID", "NOTIFY_SMS"), t, orderNo));
    } finally {
      shipped.close();
    }
  }

  /**
   * The inversion the cursor must not follow: transaction A takes its xid first, B writes X's ORDER_PAID and
   * commits, then A writes X's NOTIFY_SMS. By {@code (tx, seq)} the SMS comes first. While a transaction C
   * (xid between A's and B's) runs, the cursor can read A's SMS but not B's ORDER_PAID: it must log neither,
   * and after C ends it logs ORDER_PAID, then the SMS. A cursor that ignores the order's earlier event logs the
   * SMS while C runs, and this fails.
   */
  @Test
  void anEventFirstByXidWaitsForTheEarlierEventOfItsOrder() throws InterruptedException {
    SqlConnection a = app.pool.getConnection().await();
    SqlConnection b = app.pool.getConnection().await();
    SqlConnection c = app.pool.getConnection().await();
    try (SinkLines sink = new SinkLines()) {
      a.query("BEGIN").execute().await();
      long xa = xid(a);
      c.query("BEGIN").execute().await();
      long xc = xid(c);
      b.query("BEGIN").execute().await();
      insert(b, "ORDER_PAID", "X");
      long xb = xid(b);
      b.query("COMMIT").execute().await();
      insert(a, "NOTIFY_SMS", "X");
      a.query("COMMIT").execute().await();
      assertTrue(xa < xc && xc < xb, "xids " + xa + " < " + xc + " < " + xb);
      deployRelay("inversion", 100, 72, 60_000);
      Thread.sleep(1_000);
      assertEquals(List.of(), sink.lines(), "nothing logged while the SMS's earlier event is beyond the horizon");
      assertEquals(2, app.count("SELECT count(*) FROM outbox_pending WHERE order_no = 'X'"), "both pending");
      c.query("COMMIT").execute().await();
      eventually("both delivered", () -> undelivered() == 0);
      assertEquals(List.of("ORDER_PAID", "NOTIFY_SMS"), sink.lines().stream().map(SinkLines.Line::type).toList());
      assertLoggedOnceInOrder(sink.lines());
    } finally {
      List.of(a, b, c).forEach(conn -> conn.close().await());
    }
  }

  /**
   * The same inversion with the earlier event beyond the cursor's batch (a batch of 8 here, 12 other events
   * between them by xid) and every transaction ended: the order's events are delivered ahead of the cursor,
   * in seq order, marked DELIVERED so the cursor passes over them; the rest follow.
   */
  @Test
  void anEarlierEventBeyondTheBatchIsDeliveredAheadOfTheCursor() {
    SqlConnection a = app.pool.getConnection().await();
    SqlConnection other = app.pool.getConnection().await();
    try (SinkLines sink = new SinkLines()) {
      a.query("BEGIN").execute().await();
      xid(a);
      for (int i = 0; i < 12; i++) {
        insert(other, "ORDER_CANCELLED", "F" + i);
      }
      insert(other, "ORDER_PAID", "X");
      insert(a, "NOTIFY_SMS", "X");
      a.query("COMMIT").execute().await();
      deployRelay("ahead", 1, 72, 60_000);
      eventually("every event is delivered", () -> undelivered() == 0);
      List<SinkLines.Line> lines = sink.lines();
      assertEquals(List.of("ORDER_PAID", "NOTIFY_SMS"),
          lines.stream().filter(l -> l.orderNo().equals("X")).map(SinkLines.Line::type).toList());
      assertLoggedOnceInOrder(lines);
      assertEquals(2, app.count("SELECT count(*) FROM outbox_events WHERE order_no = 'X' AND status = 'DELIVERED'"),
          "delivered ahead: marked");
      assertEquals(12, app.count("SELECT count(*) FROM outbox_events WHERE status = 'STREAM'"));
    } finally {
      List.of(a, other).forEach(conn -> conn.close().await());
    }
  }

  /**
   * Two relays share one position (locked while a batch is logged): with 30 orders of 10 events written in
   * 300 transactions and batches of 40, each event is logged once and each order's in seq order.
   */
  @Test
  void twoRelaysLogEachStreamEventOnce() {
    try (SinkLines sink = new SinkLines()) {
      deployRelay("stream-a", 5, 72, 60_000);
      deployRelay("stream-b", 5, 72, 60_000);
      for (int k = 0; k < 10; k++) {
        for (int o = 0; o < 30; o++) {
          app.rows("INSERT INTO outbox_events (type, order_no, payload, status) VALUES ($1, $2, '{}', 'STREAM')",
              k % 2 == 0 ? "ORDER_PAID" : "NOTIFY_SMS", "T" + o);
        }
      }
      eventually("every event is delivered", () -> undelivered() == 0);
      assertLoggedOnceInOrder(sink.lines());
    }
  }

  /**
   * The retention deletes STREAM events delivered longer than {@code retentionHours} ago (1.8 s here), and the
   * marks below the newest one past it; events delivered since stay, and still show their delivery time.
   */
  @Test
  void streamedEventsPastTheRetentionAreDeleted() throws InterruptedException {
    deployRelay("retention", 100, 0.0005, 200);
    for (int i = 0; i < 50; i++) {
      app.rows("INSERT INTO outbox_events (type, order_no, payload, status) VALUES ('NOTIFY_SMS', $1, '{}', 'STREAM')",
          "OLD" + i);
    }
    eventually("the old events are delivered", () -> undelivered() == 0);
    Thread.sleep(2_500);
    for (int i = 0; i < 50; i++) {
      app.rows("INSERT INTO outbox_events (type, order_no, payload, status) VALUES ('NOTIFY_SMS', $1, '{}', 'STREAM')",
          "NEW" + i);
    }
    eventually("the new events are delivered", () -> undelivered() == 0);
    eventually("the old events are deleted",
        () -> app.count("SELECT count(*) FROM outbox_events WHERE order_no LIKE 'OLD%'") == 0);
    assertEquals(50, app.count("SELECT count(*) FROM outbox_events_shown WHERE order_no LIKE 'NEW%' "
        + "AND status = 'DELIVERED' AND delivered_at IS NOT NULL"), "the recent ones stay");
    eventually("at most the newest mark past the retention is kept",
        () -> app.count("SELECT count(*) FROM outbox_stream_marks WHERE at < now() - interval '1.8 seconds'") <= 1);
  }

  /**
   * An event is never shown delivered before it was created. {@code now()} in the cursor's transaction is the
   * transaction's start: a writer that begins after that start and commits before the cursor's read is read in
   * that transaction, and a mark stamped with {@code now()} put its delivery before its creation (CI, 2026-12-06:
   * 2 of 40 events in {@link #aServiceAsShippedWritesItsEventsForTheCursorAndLogsEachOnce}). Here the writer runs
   * while the cursor's transaction waits between its start and its read, as the relay's plan settings make it.
   */
  @Test
  void anEventReadInATransactionThatBeganBeforeItsWriterIsDeliveredAfterItWasCreated() throws InterruptedException {
    SqlConnection cursor = app.pool.getConnection().await();
    try {
      cursor.query("BEGIN").execute().await();
      cursor.query("SELECT now()").execute().await();
      Thread.sleep(50);
      app.rows("INSERT INTO outbox_events (type, order_no, payload, status) VALUES ('ORDER_PAID', 'LATE', '{}', 'STREAM')");
      List<Row> read = new ArrayList<>();
      cursor.preparedQuery(OutboxSql.STREAM_READ).execute(Params.of(800)).await().forEach(read::add);
      assertEquals(1, read.size(), "the writer committed before the read");
      Row last = read.get(0);
      assertEquals(1L, cursor.preparedQuery(OutboxSql.STREAM_ADVANCE)
          .execute(Params.of(last.getLong("tx"), last.getLong("seq"), 100L, null)).await()
          .iterator().next().getLong("moved"));
      cursor.query("COMMIT").execute().await();
      assertEquals(1, app.count("SELECT count(*) FROM outbox_events_shown WHERE order_no = 'LATE' "
          + "AND status = 'DELIVERED' AND delivered_at >= created_at"));
    } finally {
      cursor.close().await();
    }
  }
}
