package dev.ordergate.outbox;

import dev.ordergate.db.OutboxSql;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: which way an event leaves, and what the outbox's readers cost on a table whose statistics lag
 * behind it. The statements are run directly on a database whose relay is off, so nothing else moves the rows.
 */
class OutboxPathsTest {

  private static final String[] LOG_TYPES = {"NOTIFY_SMS", "ORDER_CANCELLED"};
  private static TestApp app;

  @BeforeAll
  static void start() {
    app = TestApp.startWithoutRelay();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @BeforeEach
  void empty() {
    app.truncate();
  }

  private void event(String type, String orderNo) {
    app.rows("INSERT INTO outbox_events (type, order_no, payload) VALUES ($1, $2, '{}'::jsonb)", type, orderNo);
  }

  /** {@code sql} run in a transaction under the relay's plan settings, jit off, as the relay runs it. */
  private static RowSet<Row> relayRows(String sql, Tuple params) {
    return app.verticle.pool().withTransaction(conn -> conn.query(OutboxSql.CLAIM_PLAN).execute()
            .compose(x -> conn.query("SET LOCAL jit = off").execute())
            .compose(x -> conn.preparedQuery(sql).execute(params)))
        .await();
  }

  /** The top node of {@code sql}'s plan, run (EXPLAIN ANALYZE, BUFFERS) by {@link #relayRows}. */
  private static JsonObject relayPlan(String sql, Tuple params) {
    return ((JsonArray) relayRows("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params).iterator().next()
        .getValue(0)).getJsonObject(0).getJsonObject("Plan");
  }

  /** The orders whose events one {@link OutboxSql#CLAIM} took; {@code logBehind} is its {@code $8}. */
  private List<String> claim(boolean logBehind) {
    Tuple params = Tuple.of(100, 60_000L, "test", UUID.randomUUID(), 10, 8, 0L)
        .addValue(logBehind).addValue(LOG_TYPES);
    List<String> orders = new ArrayList<>();
    app.verticle.pool().withTransaction(conn -> conn.preparedQuery(OutboxSql.CLAIM).execute(params))
        .await().forEach(r -> orders.add(r.getString("order_no") + ":" + r.getString("type")));
    orders.sort(null);
    return orders;
  }

  /**
   * While the log sink's statement keeps up, the webhook claim leaves it the log-sink heads (one row
   * version each, against a claim, a lease and a mark); behind a head of another type a log event still
   * follows in the chain; once the log statement is behind, the claim takes log-sink heads too. Without the
   * claim's type condition the first claim takes A's SMS as well and this fails.
   */
  @Test
  void theClaimLeavesLogSinkHeadsToTheLogStatementUnlessItIsBehind() {
    event("NOTIFY_SMS", "A");
    event("ORDER_PAID", "B");
    event("NOTIFY_SMS", "B");
    assertEquals(List.of("B:NOTIFY_SMS", "B:ORDER_PAID"), claim(false), "the log statement keeps up");
    assertEquals(List.of("A:NOTIFY_SMS"), claim(true), "the log statement is behind");
  }

  /**
   * The view {@code outbox_pending} (the console's counts, the bench's backlog) walks its indexes whatever
   * the statistics say (V14). They were taken when the outbox was all pending above the floor (a relay that
   * was behind); since then 30,000 events were delivered below it. On those statistics V13's function
   * scanned the whole table for ten pending events (every page's buffers); this counts the buffers the
   * count touches.
   */
  @Test
  void thePendingViewWalksItsIndexesOnStaleStatistics() {
    app.rows("ALTER TABLE outbox_events SET (autovacuum_enabled = off)");
    try {
      app.rows("""
          INSERT INTO outbox_events (type, order_no, payload)
          SELECT 'NOTIFY_SMS', 'P' || g, '{}'::jsonb FROM generate_series(1, 10) g""");
      app.rows("UPDATE outbox_floor SET lo = (SELECT min(tx) FROM outbox_events_shown)");
      app.rows("ANALYZE outbox_events");
      app.rows("""
          INSERT INTO outbox_events (type, order_no, payload, status, delivered_at, tx)
          SELECT 'NOTIFY_SMS', 'D' || g, '{}'::jsonb, 'DELIVERED', now(), (SELECT lo - 1 FROM outbox_floor)
          FROM generate_series(1, 30000) g""");
      long pages = app.count("SELECT pg_relation_size('outbox_events') / current_setting('block_size')::bigint");
      Row plan = app.rows("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM outbox_pending").get(0);
      JsonObject top = ((JsonArray) plan.getValue(0)).getJsonObject(0).getJsonObject("Plan");
      long buffers = top.getLong("Shared Hit Blocks") + top.getLong("Shared Read Blocks");
      assertEquals(10, app.count("SELECT count(*) FROM outbox_pending"));
      System.out.printf("pending count on stale statistics: %d buffers, the table has %d pages%n", buffers, pages);
      assertTrue(buffers * 4 < pages, buffers + " buffers for a table of " + pages + " pages: a scan of it");
    } finally {
      app.rows("ALTER TABLE outbox_events RESET (autovacuum_enabled)");
    }
  }

  /**
   * The claim path's walks (the floor, the claim's fresh walk, the pending view) read {@code tx >= floor AND
   * lane IS NULL}: with the log sink on the cursor, every event above the floor may be a STREAM event, and
   * none of them is theirs. Ten pending events lie behind 20,000 STREAM events, all above the floor. Along V13's
   * {@code outbox_tx} (every event) the FLOOR statement read each STREAM event's index entry and row to drop it
   * by its lane (the bench's profile: 2 to 4.4 ms a call at 10,600 callbacks/s); along V19's
   * {@code outbox_unstreamed_tx} it reads the ten. This counts its buffers; with {@code outbox_tx} back in
   * place of V19's index it touched 783 and failed (42 along V19's).
   */
  @Test
  void theFloorsWalkPassesOverNoStreamEvent() {
    long floor = app.count("SELECT lo FROM outbox_floor WHERE id = 1");
    try {
      app.rows("""
          INSERT INTO outbox_events (type, order_no, payload, status, tx)
          SELECT 'NOTIFY_SMS', 'S' || g, '{}'::jsonb, 'STREAM', -100000 + g FROM generate_series(1, 20000) g""");
      app.rows("""
          INSERT INTO outbox_events (type, order_no, payload, tx)
          SELECT 'ORDER_PAID', 'P' || g, '{}'::jsonb, -50000 + g FROM generate_series(1, 10) g""");
      app.rows("ANALYZE outbox_events");
      Tuple params = Tuple.of(-100000L, OutboxRelay.FLOOR_SCAN);
      JsonObject top = relayPlan(OutboxSql.FLOOR, params);
      long buffers = top.getLong("Shared Hit Blocks") + top.getLong("Shared Read Blocks");
      long lo = app.verticle.pool().withTransaction(conn -> conn.preparedQuery(OutboxSql.FLOOR).execute(params))
          .await().iterator().next().getLong("lo");
      assertEquals(-49999L, lo, "the floor is the first pending event's xid, past 20,000 STREAM events");
      System.out.printf("floor walk past 20,000 STREAM events: %d buffers%n", buffers);
      assertTrue(buffers < 200, buffers + " buffers for ten pending events: " + top.encodePrettily());
    } finally {
      app.rows("UPDATE outbox_floor SET lo = $1", floor);
    }
  }

  /**
   * The log sink's cursor reads a batch along {@code outbox_stream_tx} and probes, for each event, its order's
   * earlier events (V18's wait check). Statistics taken when the outbox held one order's events say an order
   * number matches every row; since then 20,000 events of 20,000 orders, each of its own transaction (xids
   * below any running one, so all readable), arrived.
   * On those statistics a probe naming the lane walked {@code outbox_stream_tx} from its event's xid to the end
   * of the backlog (a never-analyzed table did the same in the bench: 1.3 to 1.9 s a batch, issue 13), and one
   * naming the status but its xid and seq as plain columns read max() backwards along {@code outbox_tx} (V13's index of every event, replaced in V19); written
   * as shipped it goes by {@code outbox_order}. This counts the buffers one batch of 800 touches: the walks touch
   * thousands per event, the probes a few. The position goes back to where V18 put it afterwards.
   */
  @Test
  void theCursorsWaitProbeGoesByOrderOnStaleStatistics() {
    app.rows("ALTER TABLE outbox_events SET (autovacuum_enabled = off)");
    try {
      app.rows("""
          INSERT INTO outbox_events (type, order_no, payload, status, tx)
          SELECT 'NOTIFY_SMS', 'ONE', '{}'::jsonb, 'STREAM', -100000 FROM generate_series(1, 10) g""");
      app.rows("ANALYZE outbox_events");
      app.rows("""
          INSERT INTO outbox_events (type, order_no, payload, status, tx)
          SELECT 'ORDER_PAID', 'S' || g, '{}'::jsonb, 'STREAM', -100000 + g FROM generate_series(1, 20000) g""");
      app.rows("UPDATE outbox_stream SET tx = -100000, seq = (SELECT max(seq) FROM outbox_events WHERE order_no = 'ONE')");
      JsonObject top = relayPlan(OutboxSql.STREAM_READ_QUIET, Tuple.of(800));
      long buffers = top.getLong("Shared Hit Blocks") + top.getLong("Shared Read Blocks");
      assertEquals(800, top.getLong("Actual Rows"), top::encodePrettily);
      System.out.printf("cursor batch of 800 on stale statistics: %d buffers%n", buffers);
      assertTrue(buffers < 800 * 10, buffers + " buffers for a batch of 800: " + top.encodePrettily());
    } finally {
      app.rows("ALTER TABLE outbox_events RESET (autovacuum_enabled)");
      app.rows("UPDATE outbox_stream SET tx = 0, seq = 0");
    }
  }

  /**
   * The relay's gauges ({@link OutboxSql#COUNT_PENDING}, every 5 s) count the STREAM events past the cursor's
   * position from that position on, not every STREAM event the retention keeps. 20,000 STREAM events lie at or
   * below the position (delivered by the cursor, kept for the retention), ten past it. Written as a join with
   * {@code outbox_stream}, the count walked all 20,010 along {@code outbox_stream_tx} and dropped 20,000 by a join
   * filter (the bench's profile: 230 to 340 ms a call over 390,000 events); it failed here with 748 buffers and
   * more (11 as written). This counts the buffers of one count (under the relay's plan settings), then the count itself.
   */
  @Test
  void theGaugesCountReadsOnlyTheStreamEventsPastThePosition() {
    try {
      app.rows("""
          INSERT INTO outbox_events (type, order_no, payload, status, tx)
          SELECT 'NOTIFY_SMS', 'S' || g, '{}'::jsonb, 'STREAM', -100000 + g FROM generate_series(1, 20010) g""");
      app.rows("""
          UPDATE outbox_stream SET (tx, seq) = (SELECT e.tx, e.seq FROM outbox_events e WHERE e.order_no = 'S20000')""");
      long pages = app.count("SELECT pg_relation_size('outbox_events') / current_setting('block_size')::bigint");
      Tuple params = Tuple.of(app.count("SELECT lo FROM outbox_floor WHERE id = 1"));
      JsonObject top = relayPlan(OutboxSql.COUNT_PENDING, params);
      long buffers = top.getLong("Shared Hit Blocks") + top.getLong("Shared Read Blocks");
      Row counts = relayRows(OutboxSql.COUNT_PENDING, params).iterator().next();
      assertEquals(10L, counts.getLong("pending"), "the ten STREAM events past the position");
      assertEquals(0L, counts.getLong("dead"));
      System.out.printf("gauges' count past 20,000 STREAM events at or below the position: %d buffers, "
          + "the table has %d pages%n", buffers, pages);
      assertTrue(buffers * 4 < pages, buffers + " buffers for a table of " + pages + " pages: "
          + top.encodePrettily());
    } finally {
      app.rows("UPDATE outbox_stream SET tx = 0, seq = 0");
    }
  }

  /**
   * The retention's DELETE of delivered events reads what is older than the retention, not the whole outbox.
   * Ten delivered events two days old lie in front of 20,000 written within the hour (delivered, and STREAM
   * events of the cursor), with a retention of an hour. As the prune ran before, its walk found nothing past
   * the ten and went on to the end of the table: at every prune interval, a read of every event kept, which
   * with the default retention of 72 h is everything the shop wrote in three days (the bench's profile: a
   * DELETE reading data files when nothing was due). Bounded by {@link OutboxSql#PRUNE_DELIVERED_BOUND}, the
   * first event written within the retention, it reads the ten. This counts the buffers one batch touches (in
   * a transaction rolled back), then prunes for real.
   */
  @Test
  void theRetentionsDeleteReadsOnlyWhatIsOlderThanTheRetention() {
    app.rows("""
        INSERT INTO outbox_events (type, order_no, payload, status, delivered_at, created_at)
        SELECT 'NOTIFY_SMS', 'OLD' || g, '{}'::jsonb, 'DELIVERED', now() - interval '2 days', now() - interval '2 days'
        FROM generate_series(1, 10) g""");
    app.rows("""
        INSERT INTO outbox_events (type, order_no, payload, status, delivered_at)
        SELECT 'NOTIFY_SMS', 'NEW' || g, '{}'::jsonb, 'DELIVERED', now() FROM generate_series(1, 10000) g""");
    app.rows("""
        INSERT INTO outbox_events (type, order_no, payload, status)
        SELECT 'ORDER_PAID', 'STR' || g, '{}'::jsonb, 'STREAM' FROM generate_series(1, 10000) g""");
    app.rows("ANALYZE outbox_events");
    double hour = 3600;
    long pages = app.count("SELECT pg_relation_size('outbox_events') / current_setting('block_size')::bigint");
    long upto = app.verticle.pool().preparedQuery(OutboxSql.PRUNE_DELIVERED_BOUND).execute(Tuple.of(hour))
        .await().iterator().next().getLong("upto");
    Tuple params = Tuple.of(hour, 1_000, upto);
    JsonObject top = app.verticle.pool().getConnection().compose(conn -> conn.begin()
            .compose(tx -> conn.query("SET LOCAL jit = off").execute()
                .compose(x -> conn.preparedQuery("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + OutboxSql.PRUNE_DELIVERED)
                    .execute(params))
                .eventually(() -> tx.rollback()))
            .eventually(conn::close))
        .map(rows -> ((JsonArray) rows.iterator().next().getValue(0)).getJsonObject(0).getJsonObject("Plan"))
        .await();
    long buffers = top.getLong("Shared Hit Blocks") + top.getLong("Shared Read Blocks");
    System.out.printf("retention batch past 20,000 events kept: %d buffers, the table has %d pages%n", buffers, pages);
    assertTrue(buffers * 4 < pages, buffers + " buffers for a table of " + pages + " pages: a scan of it: "
        + top.encodePrettily());
    assertEquals(10, app.verticle.pool().preparedQuery(OutboxSql.PRUNE_DELIVERED).execute(params).await().rowCount());
    assertEquals(0, app.count("SELECT count(*) FROM outbox_events WHERE order_no LIKE 'OLD%'"));
    assertEquals(20_000, app.count("SELECT count(*) FROM outbox_events"), "what the retention keeps is kept");
  }
}
