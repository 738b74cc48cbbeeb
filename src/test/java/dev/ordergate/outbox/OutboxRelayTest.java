package dev.ordergate.outbox;

import dev.ordergate.config.OutboxConfig;
import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
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
import java.util.function.Supplier;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The outbox: what the gate's winners (and only they) write, and the relay's delivery guarantees
 * (order per order number, retries, a stop mid-delivery, two relays on one database). The
 * service's own relay is off here; each test deploys the relays it needs.
 */
class OutboxRelayTest {

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
  void fixtures() {
    app.truncate();
    endpoint.reset();
    app.setStock("A", 1000);
  }

  @AfterEach
  void undeployRelays() {
    relays.forEach(id -> app.vertx.undeploy(id).await());
    relays.clear();
  }

  private String deployRelay(String name, int batchSize, long leaseMs, long httpTimeoutMs) {
    return deployRelay(name, batchSize, leaseMs, httpTimeoutMs, OutboxConfig.SINK_TYPES);
  }

  /** A relay whose {@code webhookTypes} go to the endpoint; the other types go to the log sink. */
  private String deployRelay(String name, int batchSize, long leaseMs, long httpTimeoutMs, Set<String> webhookTypes) {
    Map<String, String> sinks = new HashMap<>();
    for (String type : webhookTypes) {
      sinks.put(type, endpoint.url("/sink/" + type));
    }
    OutboxConfig config = new OutboxConfig(true, 100, batchSize, 5, 20, 1_000, leaseMs, httpTimeoutMs, sinks);
    String id = app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(),
        app.verticle.outboxMetrics(), app.verticle.outboxSignal(), name)).await();
    relays.add(id);
    return id;
  }

  private void paidOrders(int n) {
    for (int i = 0; i < n; i++) {
      app.createOrder(order("O" + i, "u1", null, "A", 1, 500));
      assertEquals("APPLIED", app.callback(payment("T" + i, "O" + i, 500)).getString("outcome"));
    }
  }

  private long undelivered() {
    return app.count("SELECT count(*) FROM outbox_events_shown WHERE status <> 'DELIVERED'");
  }

  private double delivered() {
    return app.metric("ordergate.outbox.delivery", "result", "delivered");
  }

  @Test
  void onlyTheWinnerOfACancelPaymentRaceWritesEvents() {
    int n = 20;
    for (int i = 0; i < n; i++) {
      app.createOrder(order("O" + i, "u1", null, "A", 1, 500));
    }
    List<Future<?>> race = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String orderNo = "O" + i;
      Supplier<Future<?>> cancel = () -> app.callAsync(HttpMethod.POST, "/api/orders/" + orderNo + "/cancel", null, false);
      Supplier<Future<?>> pay = () -> app.callbackAsync(payment("T" + orderNo, orderNo, 500));
      // Half the races start with the payment: both sides get to win.
      race.add((i % 2 == 0 ? cancel : pay).get());
      race.add((i % 2 == 0 ? pay : cancel).get());
    }
    Future.join(race).await();

    int paid = 0;
    for (int i = 0; i < n; i++) {
      String orderNo = "O" + i;
      String status = app.getOrder(orderNo).getString("status");
      List<Row> events = app.rows("SELECT type, payload FROM outbox_events_shown WHERE order_no = $1 ORDER BY seq", orderNo);
      List<String> types = events.stream().map(r -> r.getString("type")).toList();
      String template = ((JsonObject) events.get(1).getValue("payload")).getString("template");
      if ("PAID".equals(status)) {
        paid++;
        assertEquals(List.of("ORDER_PAID", "NOTIFY_SMS"), types, orderNo);
        assertEquals(OutboxWriter.SMS_ORDER_PAID, template);
      } else {
        assertEquals("CANCELLED", status);
        assertEquals(List.of("ORDER_CANCELLED", "NOTIFY_SMS"), types, orderNo);
        assertEquals(OutboxWriter.SMS_ORDER_CANCELLED, template);
        // The losing payment is kept as an exception (manual review: no refund URL here), not as an event.
        assertEquals("MANUAL_REVIEW", app.rows("SELECT status FROM exception_orders WHERE order_no = $1", orderNo)
            .get(0).getString(0));
      }
    }
    assertEquals(2L * n, app.count("SELECT count(*) FROM outbox_events_shown"));
    System.out.printf("race: %d of %d orders paid, %d cancelled%n", paid, n, n - paid);
  }

  @Test
  void aRepeatedCancelOrCallbackWritesNoSecondEvent() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    app.createOrder(order("O2", "u1", null, "A", 1, 500));
    for (int i = 0; i < 3; i++) {
      app.callback(payment("T1", "O1", 500));
      app.call(HttpMethod.POST, "/api/orders/O2/cancel", null, false);
      app.call(HttpMethod.POST, "/api/orders/O1/cancel", null, false);
    }
    assertEquals(List.of("ORDER_PAID", "NOTIFY_SMS"), app.rows(
        "SELECT type FROM outbox_events_shown WHERE order_no = 'O1' ORDER BY seq").stream().map(r -> r.getString(0)).toList());
    assertEquals(List.of("ORDER_CANCELLED", "NOTIFY_SMS"), app.rows(
        "SELECT type FROM outbox_events_shown WHERE order_no = 'O2' ORDER BY seq").stream().map(r -> r.getString(0)).toList());
  }

  @Test
  void eventsOfOneOrderLeaveInOrderEvenWhenTheFirstNeedsRetries() {
    endpoint.responder = (path, n, body) -> path.equals("/sink/ORDER_PAID") && n <= 4 ? 503 : 200;
    deployRelay("relay-a", 10, 60_000, 5_000);
    paidOrders(2);
    eventually("every event is delivered", () -> undelivered() == 0);

    for (String orderNo : List.of("O0", "O1")) {
      List<FakeEndpoint.Received> got = endpoint.received.stream()
          .filter(r -> orderNo.equals(r.body().getString("orderNo"))).toList();
      int lastPaid = -1;
      int firstSms = Integer.MAX_VALUE;
      for (FakeEndpoint.Received r : got) {
        if (r.path().equals("/sink/ORDER_PAID")) {
          lastPaid = Math.max(lastPaid, r.index());
        } else if (r.path().equals("/sink/NOTIFY_SMS")) {
          firstSms = Math.min(firstSms, r.index());
        }
      }
      assertTrue(lastPaid >= 0 && lastPaid < firstSms && firstSms < Integer.MAX_VALUE,
          orderNo + ": the SMS left only after ORDER_PAID was delivered: " + got);
    }
    FakeEndpoint.Received sms = endpoint.at("/sink/NOTIFY_SMS").get(0);
    assertEquals(sms.idempotencyKey(), sms.body().getString("eventId"));
    assertEquals("NOTIFY_SMS", sms.body().getString("type"));
    assertEquals(OutboxWriter.SMS_ORDER_PAID, sms.body().getJsonObject("payload").getString("template"));
    assertNotNull(sms.body().getString("createdAt"));
    JsonObject paid = endpoint.at("/sink/ORDER_PAID").get(0).body().getJsonObject("payload");
    assertEquals("A", paid.getJsonArray("items").getJsonObject(0).getString("sku"));
    assertEquals(4, app.count("SELECT coalesce(sum(attempts), 0) - count(*) FROM outbox_events_shown WHERE type = 'ORDER_PAID'"));
  }

  @Test
  void aRelayStoppedMidDeliveryIsRedeliveredAtLeastOnceAndEachEventIsMarkedOnce() {
    int orders = 3;
    endpoint.responder = (path, n, body) -> path.equals("/sink/ORDER_PAID") && n <= orders ? FakeEndpoint.HANG : 200;
    double deliveredBefore = delivered();
    String first = deployRelay("relay-a", 10, 60_000, 30_000);
    paidOrders(orders);
    eventually("relay A has the first events in flight", () -> endpoint.held.size() == orders);

    app.vertx.undeploy(first).await();
    relays.remove(first);
    assertEquals(2L * orders, undelivered(), "nothing was marked by the stopped relay");
    // Each ORDER_PAID is in flight, and its NOTIFY_SMS claimed behind it (delivered right after it).
    assertEquals(2L * orders, app.count("SELECT count(*) FROM outbox_events_shown WHERE claimed_until > now()"));

    deployRelay("relay-b", 10, 60_000, 30_000);
    // Time passes: the stopped relay's leases run out (instead of waiting a minute, move them).
    app.pool.query("UPDATE outbox_events SET claimed_until = now() - interval '1 second' WHERE claimed_until IS NOT NULL")
        .execute().await();
    eventually("every event is delivered", () -> undelivered() == 0);

    List<Row> events = app.rows("SELECT id, type, attempts FROM outbox_events_shown ORDER BY seq");
    assertEquals(2 * orders, events.size());
    for (Row e : events) {
      String id = e.getUUID("id").toString();
      long times = endpoint.received.stream().filter(r -> id.equals(r.idempotencyKey())).count();
      boolean wasInFlight = "ORDER_PAID".equals(e.getString("type"));
      assertEquals(wasInFlight ? 2 : 1, times, "deliveries of " + e.getString("type") + " " + id);
      assertEquals(wasInFlight ? 2 : 1, e.getInteger("attempts"));
    }
    // The counter moves just after the mark commits: wait for it, then check it did not overshoot.
    eventually("the delivered counter caught up", () -> delivered() >= deliveredBefore + 2 * orders);
    assertEquals(deliveredBefore + 2 * orders, delivered(), "each event marked delivered exactly once");
  }

  @Test
  void aRelayStoppingWaitsForItsDeliveriesInFlightAndMarksThem() {
    int orders = 3;
    endpoint.responder = (path, n, body) -> path.equals("/sink/ORDER_PAID") ? FakeEndpoint.HANG : 200;
    String relay = deployRelay("relay-a", 10, 60_000, 30_000);
    paidOrders(orders);
    eventually("the relay has its deliveries in flight", () -> endpoint.held.size() == orders);
    var stopping = app.vertx.undeploy(relay);
    relays.remove(relay);
    assertFalse(stopping.isComplete(), "the stop did not wait for the deliveries in flight");
    endpoint.held.forEach(req -> req.response().setStatusCode(200).end());
    stopping.await();
    // The orders' later events (SMS) wait behind these and stay for the next relay.
    assertEquals(orders, app.count("SELECT count(*) FROM outbox_events_shown WHERE type = 'ORDER_PAID' AND status = 'DELIVERED'"),
        "deliveries finished during the stop were not marked");
  }

  @Test
  void twoRelaysOnOneDatabaseNeverDeliverTheSameEventTwice() {
    int orders = 20;
    double deliveredBefore = delivered();
    deployRelay("relay-a", 3, 60_000, 5_000);
    deployRelay("relay-b", 3, 60_000, 5_000);
    paidOrders(orders);
    eventually("every event is delivered", () -> undelivered() == 0);

    Set<String> keys = new HashSet<>();
    for (FakeEndpoint.Received r : endpoint.received) {
      assertTrue(keys.add(r.idempotencyKey()), "delivered twice: " + r);
    }
    assertEquals(2 * orders, keys.size());
    assertEquals(deliveredBefore + 2 * orders, delivered());
    Set<String> by = new HashSet<>();
    app.rows("SELECT DISTINCT claimed_by FROM outbox_events_shown").forEach(r -> by.add(r.getString(0)));
    assertFalse(by.isEmpty());
    System.out.printf("two relays: delivered %d events, claimed by %s%n", keys.size(), by);
  }

  /**
   * Issue 13: the walks of fresh events start at the relay's floor, an xid below which no fresh event is
   * pending (V13), so the events delivered before it are not walked again. An event whose transaction
   * commits after later events were delivered has a seq below theirs; its transaction was running when
   * each floor was taken, so every floor stayed at or below its xid, and it is delivered all the same.
   */
  @Test
  void anEventCommittedLateBelowTheFloorIsStillDelivered() {
    relays.add(app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(),
        new OutboxConfig(true, 100, 5, 5, 20, 1_000, 60_000, 5_000, Map.of()), Map.of(),
        app.verticle.outboxMetrics(), app.verticle.outboxSignal(), "floor")).await());
    io.vertx.sqlclient.SqlConnection late = app.pool.getConnection().await();
    try {
      late.query("BEGIN").execute().await();
      late.query("INSERT INTO outbox_events (type, order_no, payload) VALUES ('ORDER_PAID', 'LATE', '{}')")
          .execute().await();
      app.rows("""
          INSERT INTO outbox_events (type, order_no, payload)
          SELECT 'ORDER_PAID', 'F' || g, '{}'::jsonb FROM generate_series(1, 60) g ORDER BY g""");
      eventually("the later events are delivered", () -> app.count(
          "SELECT count(*) FROM outbox_events_shown WHERE order_no LIKE 'F%' AND status = 'DELIVERED'") == 60);
      late.query("COMMIT").execute().await();
    } finally {
      late.close().await();
    }
    long committedAt = System.nanoTime();
    eventually("the late event is delivered", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE order_no = 'LATE' AND status = 'DELIVERED'") == 1);
    long waitedMs = (System.nanoTime() - committedAt) / 1_000_000;
    assertTrue(app.rows("SELECT (SELECT seq FROM outbox_events_shown WHERE order_no = 'LATE') "
        + "< (SELECT min(seq) FROM outbox_events_shown WHERE order_no LIKE 'F%')").get(0).getBoolean(0),
        "the late event's seq is below every event delivered before it committed");
    System.out.printf("late event below the floor delivered %d ms after its commit%n", waitedMs);
  }

  /**
   * Issue 13: a sink with {@code batchMax} takes many events per POST ({@code {"events": [...]}}). The first
   * two POSTs to ORDER_PAID fail whole and are retried; each order's SMS still leaves only after its
   * ORDER_PAID was accepted, every event arrives, and far fewer POSTs than events are made.
   */
  @Test
  void aBatchingSinkTakesManyEventsPerPostAndEachOrderStaysInOrder() {
    int orders = 30;
    paidOrders(orders);
    endpoint.responder = (path, n, body) -> path.equals("/sink/ORDER_PAID") && n <= 2 ? 503 : 200;
    Map<String, String> sinks = Map.of("ORDER_PAID", endpoint.url("/sink/ORDER_PAID"),
        "NOTIFY_SMS", endpoint.url("/sink/NOTIFY_SMS"));
    OutboxConfig config = new OutboxConfig(true, 100, 100, 5, 20, 1_000, 60_000, 5_000, sinks, 72, 60_000, 2,
        Map.of("ORDER_PAID", 50, "NOTIFY_SMS", 50));
    relays.add(app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(),
        app.verticle.outboxMetrics(), app.verticle.outboxSignal(), "batcher")).await());
    eventually("every event is delivered", () -> undelivered() == 0);

    Map<String, Integer> lastPaidAccepted = new HashMap<>();
    Map<String, Integer> firstSms = new HashMap<>();
    Set<String> eventIds = new HashSet<>();
    Map<String, Integer> failedTries = new HashMap<>();
    int posts = 0;
    int paidPosts = 0;
    for (FakeEndpoint.Received r : endpoint.received) {
      posts++;
      boolean accepted = !r.path().equals("/sink/ORDER_PAID") || ++paidPosts > 2;
      for (Object o : r.body().getJsonArray("events")) {
        JsonObject envelope = (JsonObject) o;
        String orderNo = envelope.getString("orderNo");
        if (r.path().equals("/sink/ORDER_PAID")) {
          assertEquals("ORDER_PAID", envelope.getString("type"));
          if (accepted) {
            lastPaidAccepted.merge(orderNo, r.index(), Math::max);
            eventIds.add(envelope.getString("eventId"));
          } else {
            failedTries.merge(envelope.getString("eventId"), 1, Integer::sum);
          }
        } else {
          assertEquals("NOTIFY_SMS", envelope.getString("type"));
          firstSms.merge(orderNo, r.index(), Math::min);
          eventIds.add(envelope.getString("eventId"));
        }
      }
    }
    assertEquals(2 * orders, eventIds.size(), "every event was accepted");
    for (int i = 0; i < orders; i++) {
      String orderNo = "O" + i;
      assertTrue(lastPaidAccepted.get(orderNo) < firstSms.get(orderNo),
          orderNo + ": the SMS left only after ORDER_PAID was accepted");
    }
    // One event per POST would be 3 x 30 ORDER_PAID + 30 SMS = 120 POSTs.
    assertTrue(posts <= 20, "batched: " + posts + " POSTs for " + 2 * orders + " events (2 of them failed)");
    assertFalse(failedTries.isEmpty());
    for (Row row : app.rows("SELECT id::text, type, attempts FROM outbox_events_shown")) {
      assertEquals(1 + failedTries.getOrDefault(row.getString(0), 0), row.getInteger(2),
          row.getString(1) + " " + row.getString(0) + ": one attempt per POST that carried it");
    }
  }

  /**
   * Issue 13: while batches come back full, one relay runs {@code outbox.concurrency} log-sink statements
   * at once, and two relays run theirs side by side. Each order's events are still logged in seq order,
   * each once: a lane never takes an event behind a head another lane holds. Orders of 20 events with
   * batches of 3 orders (8 events per order at most) make every order span several statements.
   */
  @Test
  void logSinkLanesLogEachOrdersEventsOnceAndInOrder() {
    int orders = 40;
    int perOrder = 20;
    app.rows("""
        INSERT INTO outbox_events (type, order_no, payload)
        SELECT (ARRAY['ORDER_PAID', 'NOTIFY_SMS'])[1 + k % 2], 'L' || o, jsonb_build_object('k', k)
        FROM generate_series(1, $2::int) k CROSS JOIN generate_series(1, $1::int) o
        ORDER BY k, o""", orders, perOrder);
    List<SinkLines.Line> lines;
    try (SinkLines sink = new SinkLines()) {
      for (String name : List.of("lanes-a", "lanes-b")) {
        OutboxConfig config = new OutboxConfig(true, 100, 3, 5, 20, 1_000, 60_000, 5_000, Map.of(), 72, 60_000, 4, Map.of());
        relays.add(app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(),
            app.verticle.outboxMetrics(), app.verticle.outboxSignal(), name)).await());
      }
      eventually("every event is delivered", () -> undelivered() == 0);
      lines = sink.lines();
    }
    Map<String, Long> seqOf = new HashMap<>();
    app.rows("SELECT id::text, seq FROM outbox_events_shown").forEach(r -> seqOf.put(r.getString(0), r.getLong(1)));
    Map<String, List<Long>> logged = new HashMap<>();
    for (SinkLines.Line line : lines) {
      logged.computeIfAbsent(line.orderNo(), k -> new ArrayList<>()).add(seqOf.get(line.eventId()));
    }
    assertEquals(orders, logged.size());
    for (Map.Entry<String, List<Long>> e : logged.entrySet()) {
      List<Long> seqs = e.getValue();
      assertEquals(perOrder, seqs.size(), e.getKey() + ": each event logged once");
      assertEquals(seqs.stream().sorted().toList(), seqs, e.getKey() + ": logged in seq order");
    }
    Set<String> by = new HashSet<>();
    app.rows("SELECT DISTINCT claimed_by FROM outbox_events_shown").forEach(r -> by.add(r.getString(0)));
    assertEquals(Set.of("lanes-a", "lanes-b"), by, "both relays delivered");
  }

  /**
   * Issue 13: after a cycle that found less than a full batch, the events committed during the next
   * {@code outbox.lingerMs} gather and leave in one statement (a cycle costs the same few statements for
   * one event as for a hundred). Ten orders paid one after the other (twenty commits that each signal the
   * relay) are delivered by at most three statements; with a linger of 0 each commit's signal runs a cycle
   * of its own, about ten statements.
   */
  @Test
  void eventsCommittedDuringTheLingerLeaveTogether() {
    OutboxConfig config = new OutboxConfig(true, 60_000, 100, 5, 20, 1_000, 60_000, 5_000, Map.of(), 72, 60_000, 2,
        Map.of(), 1_000, 100);
    relays.add(app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(),
        app.verticle.outboxMetrics(), app.verticle.outboxSignal(), "linger")).await());
    paidOrders(10);
    eventually("every event is delivered", () -> undelivered() == 0);
    // delivered_at is the delivering statement's transaction time: one value per statement.
    long statements = app.count("SELECT count(DISTINCT delivered_at) FROM outbox_events_shown");
    assertTrue(statements <= 3, "20 events gathered into " + statements + " statements");
  }

  /**
   * Issue 13: with every sink type going to the log, the claim (refund requests, broker timeout messages,
   * retries) runs at most every {@code IDLE_CLAIM_MS} while the log statement keeps up, not every cycle. Ten
   * orders paid 40 ms apart (longer than the 20 ms linger set here) are ten cycles or so, each delivering its
   * order's events; with the claim held to one per second here, the burst runs at most two claims. Without the
   * hold the relay claims once a cycle and this fails. A refund request still leaves: RefundTest.
   */
  @Test
  void aLogOnlyRelayClaimsAtMostOncePerIdleClaimPeriod() throws InterruptedException {
    OutboxConfig config = new OutboxConfig(true, 60_000, 100, 5, 20, 1_000, 60_000, 5_000, Map.of(), 72, 60_000, 2,
        Map.of(), 20, 100);
    OutboxRelay relay = new OutboxRelay(app.verticle.pool(), config, Map.of(), app.verticle.outboxMetrics(),
        app.verticle.outboxSignal(), "idle-claim").idleClaimMs(1_000);
    relays.add(app.vertx.deployVerticle(relay).await());
    eventually("the first cycle claimed", () -> relay.claimStatements() == 1);
    for (int i = 0; i < 10; i++) {
      app.createOrder(order("O" + i, "u1", null, "A", 1, 500));
      assertEquals("APPLIED", app.callback(payment("T" + i, "O" + i, 500)).getString("outcome"));
      Thread.sleep(40);
    }
    eventually("every event is delivered", () -> undelivered() == 0);
    long statements = app.count("SELECT count(DISTINCT delivered_at) FROM outbox_events_shown");
    System.out.printf("10 paid orders: %d log statements, %d claims%n", statements, relay.claimStatements());
    assertTrue(statements >= 4, "the orders left in " + statements + " log statements: not a burst of cycles");
    assertTrue(relay.claimStatements() <= 3, relay.claimStatements() + " claims for " + statements + " cycles");
  }

  /**
   * The log statement and the claim walk from frontiers of their own: the log statement's walk passes over
   * every head of a type it does not take, so its frontier must not move the claim's. A webhook event is
   * committed while log-sink events keep coming (one every 10 ms, each in a transaction of its own, for 3 s);
   * it reaches its webhook at the next claim. With one frontier for both walks the log statement moves it
   * past the webhook event in every cycle (the floor's reset every 500 ms included: the log statement runs
   * first), the webhook event waits until the log traffic stops, and this fails.
   */
  @Test
  void aWebhookEventIsClaimedWhileLogSinkEventsKeepComing() throws InterruptedException {
    deployRelay("mixed", 10, 60_000, 5_000, Set.of("ORDER_PAID"));
    java.util.concurrent.atomic.AtomicBoolean streaming = new java.util.concurrent.atomic.AtomicBoolean(true);
    Thread stream = new Thread(() -> {
      for (int i = 0; streaming.get(); i++) {
        app.rows("INSERT INTO outbox_events (type, order_no, payload) VALUES ('NOTIFY_SMS', $1, '{}'::jsonb)", "L" + i);
        try {
          Thread.sleep(10);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "log-stream");
    stream.start();
    try {
      Thread.sleep(300);
      app.rows("INSERT INTO outbox_events (type, order_no, payload) VALUES ('ORDER_PAID', 'W1', '{\"orderNo\": \"W1\"}'::jsonb)");
      long committed = System.nanoTime();
      boolean reached = FakeEndpoint.within(java.time.Duration.ofMillis(2_700),
          () -> !endpoint.at("/sink/ORDER_PAID").isEmpty());
      long waitedMs = (System.nanoTime() - committed) / 1_000_000;
      assertTrue(reached, "the webhook event still waits after " + waitedMs + " ms of log traffic");
      System.out.printf("webhook event delivered %d ms after its commit, during log traffic%n", waitedMs);
      assertTrue(streaming.get(), "delivered while the log traffic ran");
    } finally {
      streaming.set(false);
      stream.join();
    }
    eventually("every event is delivered", () -> undelivered() == 0);
  }

  /**
   * A claim that comes back short moves its frontier past what it could see, even when it took nothing: here
   * a webhook event hangs in flight (the floor stays at it) while log-sink events are delivered by the log
   * statement; the claim, which takes none of them, must not walk from the floor past all of them every
   * cycle. Without the move on a short walk its frontier stays at the floor and this fails.
   */
  @Test
  void aClaimThatTakesNothingStillMovesItsFrontier() {
    endpoint.responder = (path, n, body) -> FakeEndpoint.HANG;
    Map<String, String> sinks = Map.of("ORDER_PAID", endpoint.url("/sink/ORDER_PAID"));
    OutboxRelay relay = new OutboxRelay(app.verticle.pool(),
        new OutboxConfig(true, 50, 10, 5, 20, 1_000, 60_000, 30_000, sinks), Map.of(), app.verticle.outboxMetrics(),
        app.verticle.outboxSignal(), "short-walk");
    relays.add(app.vertx.deployVerticle(relay).await());
    app.rows("INSERT INTO outbox_events (type, order_no, payload) VALUES ('ORDER_PAID', 'H1', '{}'::jsonb)");
    eventually("the webhook event hangs in flight", () -> endpoint.at("/sink/ORDER_PAID").size() == 1);
    long last = 0;
    for (int i = 0; i < 20; i++) {
      last = app.rows("INSERT INTO outbox_events (type, order_no, payload) VALUES ('NOTIFY_SMS', $1, '{}'::jsonb) "
          + "RETURNING tx", "S" + i).get(0).getLong(0);
    }
    eventually("the log events are delivered", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE type = 'NOTIFY_SMS' AND status = 'DELIVERED'") == 20);
    long lastTx = last;
    long floor = app.count("SELECT lo FROM outbox_floor");
    eventually("the claim's frontier passed the log events (floor " + floor + ", last " + lastTx + ")",
        () -> relay.claimFrontier() > lastTx);
    assertTrue(app.count("SELECT lo FROM outbox_floor") <= app.count(
        "SELECT tx FROM outbox_events_shown WHERE order_no = 'H1'"), "the floor stayed at the event in flight");
  }

  /**
   * The log sink delivers in one statement; it still waits behind an earlier event of the same order that
   * goes to a webhook (and fails there first), and every log event is marked delivered once.
   */
  @Test
  void logSinkEventsWaitBehindTheirOrdersWebhookEventAndAreDeliveredOnce() {
    endpoint.responder = (path, n, body) -> n <= 3 ? 503 : 200;
    double deliveredBefore = delivered();
    deployRelay("relay-a", 10, 60_000, 5_000, Set.of("ORDER_PAID"));
    deployRelay("relay-b", 10, 60_000, 5_000, Set.of("ORDER_PAID"));
    paidOrders(5);
    app.createOrder(order("C1", "u1", null, "A", 1, 500));
    expect(app.call(HttpMethod.POST, "/api/orders/C1/cancel", null, false), 200);
    eventually("every event is delivered", () -> undelivered() == 0);
    for (int i = 0; i < 5; i++) {
      Row r = app.rows("SELECT (SELECT delivered_at FROM outbox_events_shown WHERE order_no = $1 AND type = 'ORDER_PAID') "
          + "< (SELECT delivered_at FROM outbox_events_shown WHERE order_no = $1 AND type = 'NOTIFY_SMS')", "O" + i).get(0);
      assertTrue(r.getBoolean(0), "O" + i + ": the SMS (log sink) was delivered after ORDER_PAID (webhook)");
    }
    assertEquals(5, endpoint.received.stream().map(FakeEndpoint.Received::idempotencyKey).distinct().count());
    // C1's two events went to the log sink, both in order, once; every event counted delivered once.
    assertEquals(List.of("ORDER_CANCELLED", "NOTIFY_SMS"), app.rows(
        "SELECT type FROM outbox_events_shown WHERE order_no = 'C1' ORDER BY delivered_at, seq").stream()
        .map(r -> r.getString(0)).toList());
    eventually("the delivered counter caught up", () -> delivered() >= deliveredBefore + 12);
    assertEquals(deliveredBefore + 12, delivered());
  }

  /** Issue 13: delivered events older than outbox.retentionHours are deleted in batches; nothing else is. */
  @Test
  void deliveredEventsPastTheRetentionAreDeletedAndNothingElse() {
    endpoint.responder = (path, n, body) -> path.equals("/sink/ORDER_CANCELLED") ? 503 : 200;
    OutboxConfig config = new OutboxConfig(true, 100, 10, 100, 60_000, 60_000, 60_000, 5_000,
        Map.of("ORDER_CANCELLED", endpoint.url("/sink/ORDER_CANCELLED")), 1.0 / 3600, 200, 2, Map.of());
    relays.add(app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(),
        app.verticle.outboxMetrics(), app.verticle.outboxSignal(), "pruner")).await());
    paidOrders(30);
    app.createOrder(order("C1", "u1", null, "A", 1, 500));
    expect(app.call(HttpMethod.POST, "/api/orders/C1/cancel", null, false), 200);
    // A delivered refund request is the proof of a REFUNDED exception: it stays.
    app.rows("INSERT INTO exception_orders (order_no, kind, channel, txn_id, amount_cents, status) "
        + "VALUES ('X1', 'LATE_AFTER_CANCEL', 'sandbox', 'TX1', 100, 'REFUNDED')");
    app.rows("INSERT INTO outbox_events (type, order_no, payload, exception_id, status, delivered_at) "
        + "SELECT 'REFUND_REQUESTED', 'X1', '{}'::jsonb, id, 'DELIVERED', now() - interval '1 day' FROM exception_orders");
    eventually("the 60 paid-order events are delivered and then pruned", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE order_no LIKE 'O%'") == 0);
    assertEquals(1, app.count("SELECT count(*) FROM outbox_events_shown WHERE type = 'REFUND_REQUESTED'"));
    assertEquals(2, app.count("SELECT count(*) FROM outbox_events_shown WHERE order_no = 'C1' AND status = 'PENDING'"),
        "C1's failing ORDER_CANCELLED stays pending (and its SMS waits behind it)");
    assertTrue(app.metric("ordergate.outbox.pruned") >= 60);
  }

  /**
   * Issue 13 (V13): an event that arrives behind its order's event waiting for a retry (here a webhook that
   * answers 503) moves to lane RETRY, so the floor (recorded in outbox_floor) passes it instead of waiting
   * out the back-off; when the webhook recovers, the order's events still leave in seq order.
   */
  @Test
  void aFreshEventBehindItsOrdersRetryLeavesTheFreshWalk() {
    boolean[] failing = {true};
    endpoint.responder = (path, n, body) -> failing[0] && path.equals("/sink/ORDER_PAID") ? 503 : 200;
    OutboxConfig config = new OutboxConfig(true, 100, 10, 1_000, 300, 300, 60_000, 5_000,
        Map.of("ORDER_PAID", endpoint.url("/sink/ORDER_PAID"), "ORDER_CANCELLED", endpoint.url("/sink/ORDER_CANCELLED")));
    relays.add(app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(),
        app.verticle.outboxMetrics(), app.verticle.outboxSignal(), "retry-lane")).await());
    paidOrders(1);
    eventually("O0's ORDER_PAID waits for a retry", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE order_no = 'O0' AND type = 'ORDER_PAID' AND lane = 'RETRY'") == 1);
    long late = app.rows("INSERT INTO outbox_events (type, order_no, payload) "
        + "VALUES ('ORDER_CANCELLED', 'O0', '{}') RETURNING tx").get(0).getLong(0);
    // Later events of other orders go on being delivered past it.
    app.rows("INSERT INTO outbox_events (type, order_no, payload) SELECT 'ORDER_CANCELLED', 'P' || g, '{}'::jsonb "
        + "FROM generate_series(1, 5) g ORDER BY g");
    eventually("the late event moved to lane RETRY", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE order_no = 'O0' AND type = 'ORDER_CANCELLED' AND lane = 'RETRY'") == 1);
    eventually("the recorded floor passed it", () -> app.count("SELECT lo FROM outbox_floor") > late);
    eventually("the later events of other orders are delivered", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE order_no LIKE 'P%' AND status = 'DELIVERED'") == 5);
    assertEquals(3, app.count("SELECT count(*) FROM outbox_events_shown WHERE order_no = 'O0' AND status = 'PENDING'"));

    failing[0] = false;
    eventually("every event is delivered", () -> undelivered() == 0);
    List<String> o0 = app.rows("SELECT type FROM outbox_events_shown WHERE order_no = 'O0' ORDER BY delivered_at, seq")
        .stream().map(r -> r.getString(0)).toList();
    assertEquals(List.of("ORDER_PAID", "NOTIFY_SMS", "ORDER_CANCELLED"), o0, "O0's events left in seq order");
    List<String> got = endpoint.received.stream().filter(r -> r.path().equals("/sink/ORDER_CANCELLED"))
        .map(r -> r.body().getString("orderNo")).toList();
    assertEquals("O0", got.get(got.size() - 1), "O0's late event was the last to reach the webhook: " + got);
  }
}
