package dev.ordergate.outbox;

import dev.ordergate.db.DbUrl;
import dev.ordergate.support.TestDatabase;
import dev.ordergate.tools.ServiceProcess;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: a kill -9 of the whole service (a child process, the relay on as shipped: ORDER_PAID to a
 * webhook, NOTIFY_SMS to the log sink) while webhook deliveries are in flight loses nothing. After the
 * restart every event is delivered, the ones the kill cut off again once their lease ran out, and each
 * order's SMS still after its ORDER_PAID.
 */
class RelayKillTest {

  private static String random() {
    byte[] b = new byte[24];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  @Test
  void aServiceKilledMidDeliveryLosesNoEvent() throws Exception {
    int orders = 100;
    int held = 20;
    DbUrl db = TestDatabase.freshDatabase();
    Path dir = Files.createTempDirectory("ordergate-relay-kill");
    Vertx vertx = Vertx.vertx();
    Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(2)).connectingTo(db.connectOptions())
        .using(vertx).build();
    try (FakeEndpoint endpoint = new FakeEndpoint()) {
      // The first `held` ORDER_PAID deliveries never get an answer: they are in flight when the service dies.
      endpoint.responder = (path, n, body) -> n <= held ? FakeEndpoint.HANG : 200;
      Set<String> inFlight;
      int killedAt;
      JsonObject config = config(db, new JsonObject().put("enabled", true).put("leaseMs", 4000).put("httpTimeoutMs", 2500)
          .put("baseDelayMs", 100)
          .put("sinks", new JsonObject().put("ORDER_PAID", new JsonObject().put("url", endpoint.url("/paid")))));
      try (ServiceProcess service = ServiceProcess.start(config, dir)) {
        assertTrue(service.awaitReady(120_000), "the service started (log " + service.logFile() + ")");
        // The events a paid order's transaction writes, committed as the gate would.
        pool.query("""
            INSERT INTO outbox_events (type, order_no, payload)
            SELECT t, 'K' || lpad(g::text, 4, '0'), jsonb_build_object('orderNo', 'K' || g, 'amountCents', 500)
            FROM generate_series(1, %d) g CROSS JOIN (VALUES (1, 'ORDER_PAID'), (2, 'NOTIFY_SMS')) v(o, t)
            ORDER BY g, v.o""".formatted(orders)).execute().await();
        eventually(held + " deliveries are in flight", () -> endpoint.held.size() >= held);
        inFlight = endpoint.held.stream().map(r -> r.getHeader("Idempotency-Key"))
            .collect(Collectors.toCollection(java.util.HashSet::new));
        killedAt = endpoint.received.size();
        service.kill();
        long deliveredAtKill = count(pool, "SELECT count(*) FROM outbox_events_shown WHERE status = 'DELIVERED'");
        // On a loaded machine a held delivery may pass its httpTimeoutMs before the kill and be retried, and that
        // retry answered: it is no longer cut off by the kill. The ones the kill cut off are the held ones still
        // undelivered.
        Set<String> deliveredIds = new java.util.HashSet<>();
        pool.query("SELECT id::text FROM outbox_events_shown WHERE status = 'DELIVERED'").execute().await()
            .forEach(r -> deliveredIds.add(r.getString(0)));
        inFlight.removeAll(deliveredIds);
        assertTrue(deliveredAtKill < 2L * orders, "the kill came before the end: " + deliveredAtKill + " delivered");

        service.restart();
        assertTrue(service.awaitReady(120_000), "the service came back (log " + service.logFile() + ")");
        eventually("every event is delivered after the restart",
            () -> count(pool, "SELECT count(*) FROM outbox_events_shown WHERE status <> 'DELIVERED'") == 0);
      }
      Map<String, String> paidIds = new HashMap<>();
      for (Row r : pool.query("SELECT id::text, order_no FROM outbox_events_shown WHERE type = 'ORDER_PAID'").execute().await()) {
        paidIds.put(r.getString(0), r.getString(1));
      }
      Set<String> received = endpoint.received.stream().map(FakeEndpoint.Received::idempotencyKey)
          .collect(Collectors.toSet());
      Set<String> missing = new java.util.HashSet<>(paidIds.keySet());
      missing.removeAll(received);
      assertTrue(missing.isEmpty(), missing.size() + " of " + orders + " ORDER_PAID events marked delivered never "
          + "reached the webhook, e.g. order " + missing.stream().findFirst().map(paidIds::get).orElse(""));
      Set<String> again = endpoint.received.stream().filter(r -> r.index() >= killedAt)
          .map(FakeEndpoint.Received::idempotencyKey).collect(Collectors.toSet());
      assertTrue(!inFlight.isEmpty() && again.containsAll(inFlight),
          "each of the " + inFlight.size() + " deliveries the kill cut off was made again after the restart");
      assertEquals(0, count(pool, """
          SELECT count(*) FROM outbox_events_shown p JOIN outbox_events s ON s.order_no = p.order_no
          WHERE p.type = 'ORDER_PAID' AND s.type = 'NOTIFY_SMS' AND s.delivered_at < p.delivered_at"""),
          "each SMS (log sink) was delivered after its order's ORDER_PAID");
    } finally {
      pool.close().await();
      vertx.close().await();
      TestDatabase.drop(db);
    }
  }

  /** The service's config on {@code db}, with random keys, and {@code outbox} as its outbox block. */
  private static JsonObject config(DbUrl db, JsonObject outbox) {
    return new JsonObject()
        .put("api", new JsonObject().put("keys", new JsonArray().add(random())))
        .put("db", new JsonObject().put("url", db.uri()).put("poolSize", 8))
        .put("admin", new JsonObject().put("token", random()))
        .put("sweep", new JsonObject().put("enabled", false))
        .put("shutdown", new JsonObject().put("graceMs", 2000))
        .put("payments", new JsonObject().put("channels", new JsonObject().put("kill",
            new JsonObject().put("secrets", new JsonArray().add(random())))))
        .put("outbox", outbox);
  }

  /** The event ids the log sink logged, in the order of {@code log}'s lines from {@code fromLine} on. */
  private static List<String> loggedIds(Path log, int fromLine) throws java.io.IOException {
    java.util.regex.Pattern line = java.util.regex.Pattern.compile(
        "LogSink - (?:ORDER_PAID|ORDER_CANCELLED|NOTIFY_SMS) ([0-9a-f-]{36}) order ");
    List<String> lines = Files.readAllLines(log);
    List<String> ids = new java.util.ArrayList<>();
    for (String l : lines.subList(Math.min(fromLine, lines.size()), lines.size())) {
      java.util.regex.Matcher m = line.matcher(l);
      if (m.find()) {
        ids.add(m.group(1));
      }
    }
    return ids;
  }

  /**
   * V18: the service as shipped (every sink type to the log) delivers by its cursor. A batch is logged before
   * the transaction that moves the position commits; here that transaction is held (the test locks the marks
   * table it writes, so each try logs the batch and then waits out the lock timeout) and the service is killed
   * with it open. Nothing was delivered at the kill; after the restart every event is logged again and
   * delivered, each order's in seq order.
   */
  @Test
  void aServiceAsShippedKilledMidBatchLogsItAgain() throws Exception {
    int orders = 50;
    DbUrl db = TestDatabase.freshDatabase();
    Path dir = Files.createTempDirectory("ordergate-stream-kill");
    Vertx vertx = Vertx.vertx();
    Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(2)).connectingTo(db.connectOptions())
        .using(vertx).build();
    io.vertx.sqlclient.SqlConnection holder = null;
    try (ServiceProcess service = ServiceProcess.start(config(db, new JsonObject().put("enabled", true)), dir,
        Map.of("ORDERGATE_LOG_LEVEL", "DEBUG"))) {
      assertTrue(service.awaitReady(120_000), "the service started (log " + service.logFile() + ")");
      // Every batch writes a mark (OutboxSql.STREAM_ADVANCE): the table is held. A table lock takes no xid, so
      // the holder does not hold back the horizon the cursor reads below (a row lock would: nothing is read).
      holder = pool.getConnection().await();
      holder.query("BEGIN").execute().await();
      holder.query("LOCK TABLE outbox_stream_marks IN SHARE MODE").execute().await();
      pool.query("""
          INSERT INTO outbox_events (type, order_no, payload, status)
          SELECT t, 'K' || lpad(g::text, 4, '0'), jsonb_build_object('orderNo', 'K' || g), 'STREAM'
          FROM generate_series(1, %d) g CROSS JOIN (VALUES (1, 'ORDER_PAID'), (2, 'NOTIFY_SMS')) v(o, t)
          ORDER BY g, v.o""".formatted(orders)).execute().await();
      Path log = service.logFile();
      eventually("the batch is logged, its commit held", () -> {
        try {
          return loggedIds(log, 0).size() >= 2 * orders;
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      service.kill();
      assertEquals(0, count(pool, "SELECT count(*) FROM outbox_events_shown WHERE status = 'DELIVERED'"),
          "nothing delivered at the kill: the position did not move");
      holder.query("ROLLBACK").execute().await();
      int before = Files.readAllLines(log).size();
      service.restart();
      assertTrue(service.awaitReady(120_000), "the service came back (log " + log + ")");
      eventually("every event is delivered after the restart",
          () -> count(pool, "SELECT count(*) FROM outbox_events_shown WHERE status <> 'DELIVERED'") == 0);
      List<String> again = loggedIds(log, before);
      Map<String, Long> seqOf = new HashMap<>();
      for (Row r : pool.query("SELECT id::text, seq FROM outbox_events").execute().await()) {
        seqOf.put(r.getString(0), r.getLong(1));
      }
      assertEquals(seqOf.keySet(), Set.copyOf(again), "every event logged again after the restart");
      List<Long> seqs = again.stream().map(seqOf::get).toList();
      assertEquals(seqs.stream().sorted().toList(), seqs, "in seq order (one order's events among them)");
    } finally {
      if (holder != null) {
        holder.close().await();
      }
      pool.close().await();
      vertx.close().await();
      TestDatabase.drop(db);
    }
  }

  private static long count(Pool pool, String sql) {
    return pool.query(sql).execute().await().iterator().next().getLong(0);
  }
}
