package dev.ordergate.reminder;

import dev.ordergate.support.TestApp;
import dev.ordergate.sweep.SweepFixtures;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reminders by Redis expiry events against the machine's Redis (127.0.0.1:6379, DB 11, a key prefix
 * of this run, removed afterwards): the service enables the notifications itself, events send the
 * reminders, events while the subscriber is disconnected are lost and the scan covers them, and the
 * subscriber re-subscribes. The scan is set to an hour so that each trigger can be told apart.
 */
class RedisReminderTest {

  private static final String URL = "redis://127.0.0.1:6379/11";
  private static final String PREFIX = "ogtest-" + UUID.randomUUID().toString().substring(0, 8) + ":";

  private static TestApp app;
  private static Vertx vertx;
  private static RedisConnection admin;
  private static String notifyBefore;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
    admin = Redis.createClient(vertx, URL).connect().await();
    notifyBefore = admin.send(Request.cmd(Command.CONFIG).arg("GET").arg("notify-keyspace-events")).await()
        .get("notify-keyspace-events").toString();
    app = TestApp.start(TestApp.baseConfig()
        .put("reminders", new JsonObject().put("beforeSeconds", 2).put("scanMs", 3_600_000)
            .put("redis", new JsonObject().put("enabled", true).put("url", URL).put("keyPrefix", PREFIX)
                .put("reconnectMs", 5_000)))
        .put("outbox", new JsonObject().put("enabled", false)));
    app.setStock("A", 1_000);
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10), () -> app.verticle.reminders().redisSubscribed()));
  }

  @AfterAll
  static void stop() {
    app.close();
    try {
      Response keys = admin.send(Request.cmd(Command.KEYS).arg(PREFIX + "*")).await();
      for (Response k : keys) {
        admin.send(Request.cmd(Command.DEL).arg(k.toString())).await();
      }
      if (notifyBefore.isEmpty()) {
        admin.send(Request.cmd(Command.CONFIG).arg("SET").arg("notify-keyspace-events").arg("")).await();
      }
    } finally {
      vertx.close().await();
    }
  }

  @Test
  void expiryEventsSendRemindersAndTheScanCoversADisconnect() {
    String flags = admin.send(Request.cmd(Command.CONFIG).arg("GET").arg("notify-keyspace-events")).await()
        .get("notify-keyspace-events").toString();
    assertTrue(flags.contains("E") && (flags.contains("x") || flags.contains("A")), "the service enabled Ex: " + flags);

    // 1. Subscribed: every reminder comes from an expiry event (the scan is an hour away).
    create("EV", 8);
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10), () -> sent("EV%", "REDIS_EXPIRY") == 8));

    // 2. The subscriber is disconnected while keys expire: their events are lost; the scan sends them.
    assertEquals(1, killSubscriber());
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(5), () -> !app.verticle.reminders().redisSubscribed()));
    create("GAP", 6);
    ReminderTest.sleep(2_000);
    assertEquals(0, sent("GAP%", null), "nothing can send while disconnected and before the scan");
    assertEquals(6, app.verticle.reminders().scanNow().await().intValue());
    assertEquals(6, sent("GAP%", "DB_SCAN"));

    // 3. Re-subscribed after reconnectMs: events send reminders again.
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10), () -> app.verticle.reminders().redisSubscribed()));
    create("BACK", 5);
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10), () -> sent("BACK%", "REDIS_EXPIRY") == 5));
    assertEquals(19, app.count("SELECT count(*) FROM outbox_events_shown WHERE payload->>'template' = 'payment_reminder' "
        + "AND (order_no LIKE 'EV%' OR order_no LIKE 'GAP%' OR order_no LIKE 'BACK%')"));
  }

  @Test
  void stopWaitsForTheReminderInFlightAndAStartAfterItWorks() {
    Reminders reminders = app.verticle.reminders();
    SqlConnection lock = app.pool.getConnection().await();
    try {
      create("HELD", 1); // its key expires in about a second
      lock.query("BEGIN").execute().await();
      lock.query("LOCK TABLE payment_reminders IN ACCESS EXCLUSIVE MODE").execute().await();
      assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10), () -> app.count(
          "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
          + "AND query LIKE '%payment_reminders%'") > 0),
          "the expiry event's reminder waits for the lock");
      Future<Void> stopping = reminders.stop();
      ReminderTest.sleep(300);
      assertFalse(stopping.isComplete(), "stop() answered while an expiry event's reminder was still being sent");
      lock.query("COMMIT").execute().await();
      stopping.await();
      assertEquals(1, sent("HELD%", "REDIS_EXPIRY"), "the reminder in flight was sent before stop() answered");
    } finally {
      lock.close().await();
      reminders.start().await();
    }
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10), reminders::redisSubscribed), "subscribed again");
    create("AGAIN", 2);
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10), () -> sent("AGAIN%", "REDIS_EXPIRY") == 2),
        "after a stop and a start, keys are written and their events send reminders");
  }

  private static void create(String prefix, int n) {
    for (int i = 0; i < n; i++) {
      app.createOrder(order(prefix + i, "u" + i, null, "A", 1, 500).put("paymentTimeoutSeconds", 3));
    }
  }

  private static long sent(String like, String trigger) {
    return trigger == null
        ? app.count("SELECT count(*) FROM payment_reminders WHERE order_no LIKE $1", like)
        : app.count("SELECT count(*) FROM payment_reminders WHERE order_no LIKE $1 AND trigger = $2", like, trigger);
  }

  /** CLIENT KILL by the subscriber's own name (other clients of this Redis are left alone). */
  private static int killSubscriber() {
    String name = app.verticle.reminders().redis().clientName();
    String list = admin.send(Request.cmd(Command.CLIENT).arg("LIST")).await().toString();
    int killed = 0;
    for (String line : list.split("\n")) {
      if (line.contains(" name=" + name + " ")) {
        String id = line.replaceFirst("^id=(\\d+) .*$", "$1").strip();
        killed += admin.send(Request.cmd(Command.CLIENT).arg("KILL").arg("ID").arg(id)).await().toInteger();
      }
    }
    return killed;
  }
}
