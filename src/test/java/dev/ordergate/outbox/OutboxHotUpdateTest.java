package dev.ordergate.outbox;

import dev.ordergate.config.OutboxConfig;
import dev.ordergate.support.TestApp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13 (V13): no index names a column that a delivery changes, so a claim and a mark are HOT updates
 * where the page has room (fillfactor 50): no new index entries, and none left behind for the relay's walks
 * to step over. A class of its own: its database is new, so the table's update counters hold this test's
 * updates only ({@link TestApp#reportTableStats}: a backend reports its counters late).
 */
class OutboxHotUpdateTest {

  private static FakeEndpoint endpoint;
  private static TestApp app;

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

  /**
   * 40 paid orders: ORDER_PAID goes to a webhook (a claim and a mark), NOTIFY_SMS to the log sink (one
   * statement, or a claim and a mark behind its ORDER_PAID). Before V13 the partial indexes on the status
   * made every mark a non-HOT update (the bench's A/B: 5 to 12 % of the updates HOT, the claims only);
   * with an index on the status put back, 78 of 158 were HOT here and this test fails.
   */
  @Test
  void claimsAndMarksAreHotUpdates() {
    app.setStock("A", 1000);
    OutboxConfig config = new OutboxConfig(true, 100, 10, 5, 20, 1_000, 60_000, 5_000,
        Map.of("ORDER_PAID", endpoint.url("/sink/ORDER_PAID")));
    app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), config, Map.of(), app.verticle.outboxMetrics(),
        app.verticle.outboxSignal(), "hot")).await();
    int orders = 40;
    for (int i = 0; i < orders; i++) {
      app.createOrder(order("O" + i, "u1", null, "A", 1, 500));
      assertEquals("APPLIED", app.callback(payment("T" + i, "O" + i, 500)).getString("outcome"));
    }
    eventually("every event is delivered", () -> app.count(
        "SELECT count(*) FROM outbox_events_shown WHERE status <> 'DELIVERED'") == 0);
    // At least one update per event (log sink) and two per ORDER_PAID (claim and mark).
    eventually("the relay's update counts reached pg_stat",
        () -> app.tableUpdates("outbox_events")[0] >= 3L * orders);
    long[] counted = app.tableUpdates("outbox_events");
    System.out.printf("deliveries of %d events: %d updates of outbox_events, %d HOT%n", 2 * orders, counted[0],
        counted[1]);
    assertTrue(counted[1] >= 0.75 * counted[0], counted[1] + " of " + counted[0] + " updates were HOT");
  }
}
