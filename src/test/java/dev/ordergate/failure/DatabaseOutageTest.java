package dev.ordergate.failure;

import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * PostgreSQL drops the service's connections ({@code pg_terminate_backend}, 57P01) again and again
 * under callback and read load: only 200 or 503, recovery without a restart, nothing acknowledged
 * lost ({@link OutageLoad}).
 */
class DatabaseOutageTest {

  @Test
  void cutConnectionsAnswer503AndLoseNoAcknowledgedPayment() throws Exception {
    try (TestApp app = TestApp.start(TestApp.baseConfig().put("db", new JsonObject().put("poolSize", 8)))) {
      AtomicInteger cuts = new AtomicInteger();
      var statuses = OutageLoad.run(app, 300, 6000, running -> {
        // Every 150 ms, terminates every backend of the service's database but this one.
        try (Connection c = DriverManager.getConnection(app.db.jdbcUrl(), app.db.user(), app.db.password());
             PreparedStatement kill = c.prepareStatement("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                 + "WHERE datname = current_database() AND pid <> pg_backend_pid()")) {
          while (running.get()) {
            try (ResultSet rs = kill.executeQuery()) {
              rs.next();
              if (rs.getInt(1) > 0) {
                cuts.incrementAndGet();
              }
            }
            Thread.sleep(150);
          }
        }
      });
      System.out.println("database outage: " + cuts.get() + " cuts, answers " + statuses + " (-1: payments acknowledged)");
    }
  }
}
