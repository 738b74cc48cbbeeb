package dev.ordergate.failure;

import dev.ordergate.db.DbUrl;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.UUID;

/**
 * The service's own PostgreSQL (an embedded one this test owns) is stopped and started twice under
 * callback and read load: connections refused while it is down, 57P01 as it shuts down, 57P03 as it
 * starts. Only 200 or 503, recovery without a restart of the service, nothing acknowledged lost.
 */
class DatabaseRestartTest {

  @Test
  void twoDatabaseRestartsUnderLoadAnswer503AndLoseNoAcknowledgedPayment() throws Exception {
    Path dir = Files.createTempDirectory("ordergate-restart-pg");
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    EmbeddedPostgres[] pg = {start(dir, port)};
    String name = "og_restart_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection c = pg[0].getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    }
    DbUrl db = new DbUrl("postgresql://postgres@localhost:" + port + "/" + name);
    try (TestApp app = TestApp.start(TestApp.baseConfig().put("db", new JsonObject().put("poolSize", 8)), db)) {
      var statuses = OutageLoad.run(app, 200, 9000, running -> {
        for (int restart = 0; restart < 2 && running.get(); restart++) {
          Thread.sleep(1500);
          pg[0].close();
          Thread.sleep(1000);
          pg[0] = start(dir, port);
        }
      });
      System.out.println("database restarts: 2, answers " + statuses + " (-1: payments acknowledged)");
    } finally {
      pg[0].close();
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(java.io.File::delete);
      }
    }
  }

  private static EmbeddedPostgres start(Path dir, int port) throws java.io.IOException {
    return EmbeddedPostgres.builder().setDataDirectory(dir).setCleanDataDirectory(false).setPort(port)
        .setServerConfig("synchronous_commit", "on").start();
  }
}
