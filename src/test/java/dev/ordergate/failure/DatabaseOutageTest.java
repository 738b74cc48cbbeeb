package dev.ordergate.failure;

import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PostgreSQL drops the service's connections ({@code pg_terminate_backend}, 57P01) again and again
 * under callback and read load: every answer is 200 or 503 (never 500), the service recovers
 * without a restart, and every payment it acknowledged is in the database.
 */
class DatabaseOutageTest {

  private static final int ORDERS = 300;

  @Test
  void cutConnectionsAnswer503AndLoseNoAcknowledgedPayment() throws Exception {
    try (TestApp app = TestApp.start(TestApp.baseConfig()
        .put("db", new JsonObject().put("poolSize", 8).put("connectTimeoutMs", 2000)))) {
      app.setStock("A", ORDERS);
      for (int i = 0; i < ORDERS; i++) {
        app.createOrder(TestApp.order("OUT" + i, "u1", null, "A", 1, 100));
      }
      Map<Integer, Integer> statuses = new TreeMap<>();
      List<String> unexpected = new ArrayList<>();
      Set<String> acknowledged = ConcurrentHashMap.newKeySet();
      AtomicBoolean chaos = new AtomicBoolean(true);
      AtomicInteger cuts = new AtomicInteger();
      Thread killer = new Thread(() -> cutConnections(app, chaos, cuts), "pg-terminator");
      killer.start();
      long until = System.currentTimeMillis() + 6000;
      int round = 0;
      try {
        while (System.currentTimeMillis() < until) {
          List<Future<Void>> batch = new ArrayList<>();
          for (int i = 0; i < 24; i++) {
            int n = (round * 24 + i) % ORDERS;
            String orderNo = "OUT" + n;
            batch.add(app.callbackAsync(TestApp.payment("TX" + n, orderNo, 100)).map(resp -> {
              record(statuses, unexpected, "callback " + orderNo, resp.statusCode(), resp.bodyAsString());
              if (resp.statusCode() == 200 && "PAID".equals(resp.bodyAsJsonObject().getString("orderStatus"))) {
                acknowledged.add(orderNo);
              }
              return null;
            }));
            batch.add(app.callAsync(HttpMethod.GET, "/api/orders/" + orderNo, null, false).map(resp -> {
              record(statuses, unexpected, "read " + orderNo, resp.statusCode(), resp.bodyAsString());
              return null;
            }));
          }
          Future.join(batch).await();
          round++;
        }
      } finally {
        chaos.set(false);
        killer.join();
      }
      System.out.println("database outage: " + cuts.get() + " cuts, answers " + statuses + ", "
          + acknowledged.size() + " payments acknowledged");
      assertTrue(unexpected.isEmpty(), "answers other than 200/503: " + unexpected);
      assertTrue(statuses.getOrDefault(503, 0) > 0, "the cuts never reached a request: " + statuses);
      assertTrue(statuses.getOrDefault(200, 0) > 0, "nothing succeeded between the cuts: " + statuses);

      // Recovery without a restart: every order's payment now goes through (gateways retry until 200).
      long deadline = System.currentTimeMillis() + 30_000;
      for (int n = 0; n < ORDERS; n++) {
        while (true) {
          var resp = app.callbackAsync(TestApp.payment("TX" + n, "OUT" + n, 100)).await();
          if (resp.statusCode() == 200) {
            break;
          }
          assertEquals(503, resp.statusCode(), resp.bodyAsString());
          assertTrue(System.currentTimeMillis() < deadline, "no recovery within 30 s");
          Thread.sleep(100);
        }
      }
      for (String orderNo : acknowledged) {
        assertEquals("PAID", app.getOrder(orderNo).getString("status"), orderNo + " was acknowledged");
      }
      assertEquals(ORDERS, app.count("SELECT count(*) FROM orders WHERE status = 'PAID'"));
      assertEquals(ORDERS, app.count("SELECT count(*) FROM payment_receipts"));
    }
  }

  private static synchronized void record(Map<Integer, Integer> statuses, List<String> unexpected, String what,
                                          int status, String body) {
    statuses.merge(status, 1, Integer::sum);
    if (status != 200 && status != 503) {
      unexpected.add(what + " -> " + status + " " + body);
    } else if (status == 503 && !body.contains("DATABASE_UNAVAILABLE")) {
      unexpected.add(what + " -> 503 without DATABASE_UNAVAILABLE: " + body);
    }
  }

  /** Every 150 ms, terminates every backend of the service's database but this one. */
  private static void cutConnections(TestApp app, AtomicBoolean chaos, AtomicInteger cuts) {
    try (Connection c = DriverManager.getConnection(app.db.jdbcUrl(), app.db.user(), app.db.password());
         PreparedStatement kill = c.prepareStatement("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
             + "WHERE datname = current_database() AND pid <> pg_backend_pid()")) {
      while (chaos.get()) {
        try (ResultSet rs = kill.executeQuery()) {
          rs.next();
          if (rs.getInt(1) > 0) {
            cuts.incrementAndGet();
          }
        }
        Thread.sleep(150);
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
