package dev.ordergate.sweep;

import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The service's own timer in precise mode: lateness is about a second while the period is a minute. */
class SweepPreciseTest {

  private static TestApp app;

  @BeforeAll
  static void start() {
    JsonObject config = TestApp.baseConfig().put("sweep", new JsonObject()
        .put("enabled", true).put("periodMs", 60_000).put("precise", true).put("minDelayMs", 200));
    app = TestApp.start(config);
    app.setStock("A", 10);
    // The first run follows startup after minDelayMs; then, with nothing pending, the timer is a period away.
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(20),
        () -> app.count("SELECT count(*) FROM sweep_runs WHERE finished_at IS NOT NULL") >= 1));
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @Test
  void preciseModeCancelsWithinTwoSecondsOfExpiryWhileThePeriodIsAMinute() {
    long runsBefore = app.count("SELECT count(*) FROM sweep_runs");
    app.createOrder(order("LATER", "u2", null, "A", 1, 500).put("paymentTimeoutSeconds", 3600));
    JsonObject created = app.createOrder(order("SOON", "u1", null, "A", 2, 500).put("paymentTimeoutSeconds", 1));

    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(20),
        () -> "CANCELLED".equals(app.getOrder("SOON").getString("status"))),
        "a 1 s order must be cancelled long before the 60 s period");
    JsonObject cancelled = app.getOrder("SOON");
    Duration lateness = Duration.between(Instant.parse(created.getString("expiresAt")),
        Instant.parse(cancelled.getString("cancelledAt")));
    assertTrue(!lateness.isNegative() && lateness.compareTo(Duration.ofSeconds(2)) < 0,
        "cancelled " + lateness + " after expiry");
    assertEquals("TIMEOUT_SWEEP", cancelled.getString("closedBy"));
    assertEquals(10 - 1, app.stock("A"));
    assertEquals("PENDING_PAYMENT", app.getOrder("LATER").getString("status"));
    assertTrue(app.count("SELECT count(*) FROM sweep_runs") <= runsBefore + 3,
        "precise mode wakes for the due order, it does not poll");
  }

  /** Issue 14, defect 6: the due order is row-locked by someone else; empty runs back off instead of spinning. */
  @Test
  void emptyRunsBehindALockedDueOrderBackOff() throws Exception {
    app.createOrder(order("HELD", "u3", null, "A", 1, 500).put("paymentTimeoutSeconds", 1));
    var conn = app.pool.getConnection().await();
    try {
      var tx = conn.begin().await();
      conn.query("SELECT order_no FROM orders WHERE order_no = 'HELD' FOR UPDATE").execute().await();
      Thread.sleep(1_500);
      long before = app.count("SELECT count(*) FROM sweep_runs");
      Thread.sleep(6_000);
      long runs = app.count("SELECT count(*) FROM sweep_runs") - before;
      // Without back-off: a run every minDelayMs (200 ms), about 30 in 6 s.
      assertTrue(runs <= 8, runs + " sweep runs in 6 s while the due order was locked");
      tx.rollback().await();
    } finally {
      conn.close().await();
    }
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(20),
        () -> "CANCELLED".equals(app.getOrder("HELD").getString("status"))), "cancelled once released");
  }
}
