package dev.ordergate.outbox;

import dev.ordergate.config.OutboxConfig;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: webhook sinks that take batches ({@code batchMax} above 1) are delivered by the cursor (V18), as the
 * log sink is: STREAM events POSTed before the position moves, never updated. Each order's events reach the
 * receiver in seq order; an event whose POST failed, and its order's events behind it, leave the cursor for
 * the claim path's retries; a relay stopped mid-POST moves nothing.
 */
class WebhookCursorTest {

  private static FakeEndpoint endpoint;
  private static TestApp app;
  private final List<String> relays = new ArrayList<>();

  @BeforeAll
  static void start() {
    endpoint = new FakeEndpoint();
    app = TestApp.startWithoutRelay();
  }

  @AfterAll
  static void stop() {
    app.close();
    endpoint.close();
  }

  @BeforeEach
  void clean() {
    app.truncate();
    endpoint.reset();
  }

  @AfterEach
  void undeploy() {
    relays.forEach(id -> app.vertx.undeploy(id).await());
    relays.clear();
  }

  private static Map<String, String> sinks() {
    Map<String, String> sinks = new HashMap<>();
    for (String type : OutboxConfig.SINK_TYPES) {
      sinks.put(type, endpoint.url("/sink/" + type));
    }
    return sinks;
  }

  private static OutboxConfig config(int maxAttempts, long baseDelayMs) {
    Map<String, Integer> batchMax = new HashMap<>();
    OutboxConfig.SINK_TYPES.forEach(t -> batchMax.put(t, 50));
    return new OutboxConfig(true, 100, 100, maxAttempts, baseDelayMs, 60_000, 60_000, 5_000, sinks(), 72, 60_000, 2,
        batchMax);
  }

  private String deployRelay(String name, OutboxConfig config) {
    String id = app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(),
        app.verticle.outboxMetrics(), app.verticle.outboxSignal(), name)).await();
    relays.add(id);
    return id;
  }

  /** ORDER_PAID then NOTIFY_SMS of orders W0.. as STREAM events, as a streaming service writes them. */
  private static void streamEvents(int orders) {
    app.rows("""
        INSERT INTO outbox_events (type, order_no, payload, status)
        SELECT t, 'W' || o, jsonb_build_object('o', o), 'STREAM'
        FROM generate_series(0, $1::int - 1) o
        CROSS JOIN unnest(ARRAY['ORDER_PAID', 'NOTIFY_SMS']) WITH ORDINALITY AS x(t, k)
        ORDER BY o, k""", orders);
  }

  private static long undelivered() {
    return app.count("SELECT count(*) FROM outbox_events_shown WHERE status <> 'DELIVERED'");
  }

  /** The receiver's POSTs that were answered 2xx, in arrival order, and each event id in them. */
  private record Accepted(int index, String path, JsonObject envelope) {}

  private static List<Accepted> accepted(Set<Integer> failedIndexes) {
    List<Accepted> out = new ArrayList<>();
    for (FakeEndpoint.Received r : endpoint.received) {
      if (failedIndexes.contains(r.index())) {
        continue;
      }
      for (Object o : r.body().getJsonArray("events")) {
        out.add(new Accepted(r.index(), r.path(), (JsonObject) o));
      }
    }
    return out;
  }

  /**
   * Every event accepted by a 2xx POST, exactly {@code once} or at least once, and each SMS sent only after its
   * order's ORDER_PAID was first accepted.
   */
  private static void assertEachAcceptedInOrder(Set<Integer> failedIndexes, boolean once) {
    List<Accepted> accepted = accepted(failedIndexes);
    Set<String> ids = new HashSet<>();
    accepted.forEach(a -> assertTrue(ids.add(a.envelope().getString("eventId")) || !once, "accepted once: " + a));
    Set<String> all = new HashSet<>();
    app.rows("SELECT id::text FROM outbox_events").forEach(r -> all.add(r.getString(0)));
    assertEquals(all, ids, "every event accepted");
    Map<String, Integer> paidAcceptedAt = new HashMap<>();
    accepted.stream().filter(a -> a.path().equals("/sink/ORDER_PAID"))
        .forEach(a -> paidAcceptedAt.putIfAbsent(a.envelope().getString("orderNo"), a.index()));
    for (FakeEndpoint.Received r : endpoint.received) {
      if (!r.path().equals("/sink/NOTIFY_SMS")) {
        continue;
      }
      for (Object o : r.body().getJsonArray("events")) {
        String orderNo = ((JsonObject) o).getString("orderNo");
        assertTrue(paidAcceptedAt.containsKey(orderNo) && paidAcceptedAt.get(orderNo) < r.index(),
            orderNo + ": its SMS was sent (POST " + r.index() + ") only after its ORDER_PAID was accepted (POST "
                + paidAcceptedAt.get(orderNo) + ")");
      }
    }
  }

  /**
   * A service whose webhooks all take batches writes STREAM events; its relay POSTs them by the cursor, a few
   * POSTs for 60 events, and never updates a row: they show DELIVERED with one attempt and a delivery time.
   */
  @Test
  void aServiceWithBatchingWebhooksDeliversByTheCursor() {
    JsonObject conf = TestApp.baseConfig();
    JsonObject sinks = new JsonObject();
    OutboxConfig.SINK_TYPES.forEach(t -> sinks.put(t, new JsonObject().put("url", endpoint.url("/sink/" + t))
        .put("batchMax", 50)));
    conf.put("outbox", new JsonObject().put("sinks", sinks));
    TestApp shipped = TestApp.start(conf);
    try {
      shipped.setStock("A", 100);
      for (int i = 0; i < 30; i++) {
        shipped.createOrder(order("S" + i, "u1", null, "A", 1, 500));
        assertEquals("APPLIED", shipped.callback(payment("TS" + i, "S" + i, 500)).getString("outcome"));
      }
      eventually("every event is delivered",
          () -> shipped.count("SELECT count(*) FROM outbox_events_shown WHERE status <> 'DELIVERED'") == 0);
      assertEquals(60, shipped.count("SELECT count(*) FROM outbox_events WHERE status = 'STREAM'"),
          "written for the cursor, and never updated");
      assertEquals(0, shipped.count("SELECT count(*) FROM outbox_events_shown "
          + "WHERE delivered_at IS NULL OR delivered_at < created_at OR attempts <> 1"));
      Set<String> ids = new HashSet<>();
      for (FakeEndpoint.Received r : endpoint.received) {
        r.body().getJsonArray("events").forEach(o -> assertTrue(ids.add(((JsonObject) o).getString("eventId"))));
      }
      assertEquals(60, ids.size(), "each event POSTed once");
      assertTrue(endpoint.received.size() <= 20, endpoint.received.size() + " POSTs for 60 events");
    } finally {
      shipped.close();
    }
  }

  /**
   * The first POST to ORDER_PAID fails: its 30 events leave the cursor with their attempt counted and logged,
   * their orders' SMS leave it unattempted (none is sent before its ORDER_PAID is accepted), and an SMS written
   * for one of those orders while its ORDER_PAID waits for its retry leaves the cursor too (its order's earlier
   * event is pending on the claim path). The claim path delivers them all, each order in seq order. A cursor that
   * POSTed the unattempted SMS, or the late one, sends an SMS before its ORDER_PAID is accepted and fails this.
   */
  @Test
  void aFailedPostLeavesTheCursorAndItsOrdersLaterEventsWaitBehindIt() {
    int orders = 30;
    streamEvents(orders);
    endpoint.responder = (path, n, body) -> path.equals("/sink/ORDER_PAID") && n == 1 ? 503 : 200;
    deployRelay("cursor-retry", config(5, 1_500));
    eventually("the ORDER_PAID events wait for their retry", () -> app.count(
        "SELECT count(*) FROM outbox_events WHERE type = 'ORDER_PAID' AND lane = 'RETRY' AND attempts = 1") == orders);
    app.rows("INSERT INTO outbox_events (type, order_no, payload, status) VALUES ('NOTIFY_SMS', 'W0', '{}', 'STREAM')");
    eventually("every event is delivered", () -> undelivered() == 0);
    assertEquals(1, app.count("SELECT count(*) FROM outbox_events WHERE order_no = 'W0' AND type = 'NOTIFY_SMS' "
        + "AND status = 'DELIVERED' AND seq = (SELECT max(seq) FROM outbox_events)"), "the late SMS left the cursor");
    assertEquals(orders, app.count("SELECT count(*) FROM outbox_attempts WHERE outcome = 'RETRY' "
        + "AND error = 'HTTP 503 from " + endpoint.url("/sink/ORDER_PAID") + "' AND attempt = 1"));
    for (Row row : app.rows("SELECT type, attempts FROM outbox_events_shown")) {
      assertEquals(row.getString(0).equals("ORDER_PAID") ? 2 : 1, row.getInteger(1), row.getString(0));
    }
    int firstPaid = endpoint.at("/sink/ORDER_PAID").get(0).index();
    assertEachAcceptedInOrder(Set.of(firstPaid), true);
  }

  /**
   * With one attempt allowed, an event whose POST failed goes DEAD (logged as such), and its order's SMS is still
   * delivered.
   */
  @Test
  void withOneAttemptAFailedPostIsDead() {
    streamEvents(3);
    endpoint.responder = (path, n, body) -> path.equals("/sink/ORDER_PAID") ? 500 : 200;
    deployRelay("cursor-dead", config(1, 1_000));
    eventually("the SMS are delivered", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE type = 'NOTIFY_SMS' AND status = 'DELIVERED'") == 3);
    assertEquals(3, app.count("SELECT count(*) FROM outbox_events WHERE type = 'ORDER_PAID' AND status = 'DEAD' "
        + "AND attempts = 1 AND lane = 'DEAD'"));
    assertEquals(3, app.count("SELECT count(*) FROM outbox_attempts WHERE outcome = 'DEAD'"));
    assertEquals(1, endpoint.at("/sink/ORDER_PAID").size(), "one POST, not retried");
  }

  /**
   * While a POST is out, no transaction is open and no row lock is held: the relay holds a lease on the position
   * (V20). A relay stopped while its POST hangs gives the lease back: no event moved, none left the cursor. The
   * next relay delivers every event (at least once).
   */
  @Test
  void aRelayStoppedMidPostMovesNothingAndTheNextDeliversEverything() {
    streamEvents(5);
    endpoint.responder = (path, n, body) -> FakeEndpoint.HANG;
    String id = deployRelay("cursor-hang", config(5, 1_000));
    eventually("a POST hangs", () -> !endpoint.held.isEmpty());
    assertEquals(0, app.count("SELECT count(*) FROM pg_stat_activity "
        + "WHERE datname = current_database() AND state LIKE 'idle in transaction%'"), "no transaction open");
    assertEquals(0, app.count("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        + "WHERE a.datname = current_database() AND l.relation = 'outbox_stream'::regclass AND a.pid <> pg_backend_pid()"),
        "no lock on the position");
    assertEquals(1, app.count("SELECT count(*) FROM outbox_stream WHERE lease_token IS NOT NULL "
        + "AND lease_until > now()"), "the position is under the relay's lease");
    app.vertx.undeploy(id).await();
    relays.remove(id);
    eventually("the lease is given back", () -> app.count(
        "SELECT count(*) FROM outbox_stream WHERE lease_token IS NULL") == 1);
    assertEquals(10, app.count("SELECT count(*) FROM outbox_events WHERE status = 'STREAM'"), "none left the cursor");
    assertEquals(10, undelivered(), "the position did not move");
    assertEquals(0, app.count("SELECT count(*) FROM outbox_attempts"));
    endpoint.reset();
    deployRelay("cursor-next", config(5, 1_000));
    eventually("every event is delivered", () -> undelivered() == 0);
    assertEachAcceptedInOrder(Set.of(), true);
  }

  /**
   * A relay whose lease on the position ran out and was taken by another while its POST was out (a pause longer
   * than the lease) moves nothing when the POST is accepted: the position stays, no event leaves the cursor, and
   * the other's lease is left as it is. When that lease runs out in turn, the batch is delivered again (at least
   * once). A relay that moved the position without its token, or gave back a lease that is not its own, fails.
   */
  @Test
  void aRelayWhoseLeaseWasTakenOverMidPostMovesNothing() {
    streamEvents(5);
    AtomicBoolean hang = new AtomicBoolean(true);
    endpoint.responder = (path, n, body) -> hang.get() && path.equals("/sink/ORDER_PAID") ? FakeEndpoint.HANG : 200;
    deployRelay("cursor-overtaken", config(5, 1_000));
    eventually("a POST hangs", () -> !endpoint.held.isEmpty());
    String other = app.rows("UPDATE outbox_stream SET lease_token = gen_random_uuid(), "
        + "lease_until = now() + interval '1 hour' WHERE lease_token IS NOT NULL RETURNING lease_token::text")
        .iterator().next().getString(0);
    hang.set(false);
    endpoint.held.forEach(req -> req.response().setStatusCode(200).end());
    eventually("the SMS round is POSTed after the ORDER_PAID round", () -> !endpoint.at("/sink/NOTIFY_SMS").isEmpty());
    assertFalse(FakeEndpoint.within(java.time.Duration.ofSeconds(1), () -> undelivered() < 10 || app.count(
        "SELECT count(*) FROM outbox_stream WHERE lease_token IS DISTINCT FROM '" + other + "'::uuid") > 0),
        "for a second after, the position stays and the other's lease is kept");
    assertEquals(10, app.count("SELECT count(*) FROM outbox_events WHERE status = 'STREAM'"), "none left the cursor");
    assertEquals(0, app.count("SELECT count(*) FROM outbox_attempts"));
    app.rows("UPDATE outbox_stream SET lease_until = now() - interval '1 second'");
    eventually("every event is delivered", () -> undelivered() == 0);
    assertTrue(endpoint.at("/sink/ORDER_PAID").size() >= 2, "the batch was POSTed again");
    assertEachAcceptedInOrder(Set.of(), false);
  }
}
