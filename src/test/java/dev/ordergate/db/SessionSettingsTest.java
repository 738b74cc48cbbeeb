package dev.ordergate.db;

import dev.ordergate.support.TestApp;
import dev.ordergate.support.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 14, defect 6: durability and isolation must not depend on the server's defaults. On a database
 * whose defaults are {@code synchronous_commit = off} and SERIALIZABLE, the service's own sessions still
 * commit durably, in READ COMMITTED (what the gate assumes), with bounded lock and statement waits.
 */
class SessionSettingsTest {

  @Test
  void theServicesSessionsOverrideTheDatabasesDefaults() throws Exception {
    DbUrl db = TestDatabase.freshDatabase();
    try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
         Statement st = c.createStatement()) {
      String name = db.connectOptions().getDatabase();
      st.execute("ALTER DATABASE " + name + " SET synchronous_commit = off");
      st.execute("ALTER DATABASE " + name + " SET default_transaction_isolation = 'serializable'");
      st.execute("ALTER DATABASE " + name + " SET lock_timeout = 0");
    }
    try (TestApp app = TestApp.start(TestApp.baseConfig(), db)) {
      // The test's own pool sees the database's defaults ...
      assertEquals("off", show(app.pool, "synchronous_commit"));
      // ... the service's pool does not.
      io.vertx.sqlclient.Pool service = app.verticle.pool();
      assertEquals("on", show(service, "synchronous_commit"));
      assertEquals("read committed", show(service, "transaction_isolation"));
      assertEquals("3s", show(service, "lock_timeout"));
      assertEquals("30s", show(service, "statement_timeout"));
    }
  }

  private static String show(io.vertx.sqlclient.Pool pool, String setting) {
    return pool.query("SHOW " + setting).execute().await().iterator().next().getString(0);
  }
}
