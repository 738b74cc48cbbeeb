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
      JsonObject config = new JsonObject()
          .put("api", new JsonObject().put("keys", new JsonArray().add(random())))
          .put("db", new JsonObject().put("url", db.uri()).put("poolSize", 8))
          .put("admin", new JsonObject().put("token", random()))
          .put("sweep", new JsonObject().put("enabled", false))
          .put("shutdown", new JsonObject().put("graceMs", 2000))
          .put("payments", new JsonObject().put("channels", new JsonObject().put("kill",
              new JsonObject().put("secrets", new JsonArray().add(random())))))
          .put("outbox", new JsonObject().put("enabled", true).put("leaseMs", 4000).put("httpTimeoutMs", 2500)
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

  private static long count(Pool pool, String sql) {
    return pool.query(sql).execute().await().iterator().next().getLong(0);
  }
}
