package dev.ordergate.support;

import dev.ordergate.db.DbUrl;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.UUID;

/**
 * A real PostgreSQL for the tests, never a mock: {@code ORDERGATE_TEST_DB_URL} when set, else a
 * Testcontainers PostgreSQL when a Docker engine answers, else an embedded PostgreSQL (zonky).
 * Each test class gets a database of its own, created empty and migrated by the service.
 */
public final class TestDatabase {

  private static final Logger log = LoggerFactory.getLogger(TestDatabase.class);
  private static DbUrl server;

  private TestDatabase() {
  }

  private static synchronized DbUrl server() {
    if (server != null) {
      return server;
    }
    String url = System.getenv("ORDERGATE_TEST_DB_URL");
    if (url != null && !url.isBlank()) {
      log.info("tests use the PostgreSQL at ORDERGATE_TEST_DB_URL");
      server = new DbUrl(url);
    } else if (dockerAvailable()) {
      PostgreSQLContainer container = new PostgreSQLContainer("postgres:16-alpine");
      container.start();
      log.info("tests use a Testcontainers PostgreSQL");
      server = new DbUrl("postgresql://" + container.getUsername() + ":" + container.getPassword() + "@"
          + container.getHost() + ":" + container.getMappedPort(5432) + "/" + container.getDatabaseName());
    } else {
      try {
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
            .setServerConfig("max_connections", "300")
            .setServerConfig("synchronous_commit", "on")
            .start();
        log.info("tests use an embedded PostgreSQL on port {}", pg.getPort());
        server = new DbUrl("postgresql://postgres@localhost:" + pg.getPort() + "/postgres");
      } catch (Exception e) {
        throw new IllegalStateException("no PostgreSQL for the tests: set ORDERGATE_TEST_DB_URL", e);
      }
    }
    return server;
  }

  private static boolean dockerAvailable() {
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (Throwable t) {
      return false;
    }
  }

  /** A new, empty database on the test server. */
  public static DbUrl freshDatabase() {
    DbUrl admin = server();
    String name = "og_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    try (Connection c = DriverManager.getConnection(admin.jdbcUrl(), admin.user(), admin.password());
         Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    } catch (Exception e) {
      throw new IllegalStateException("cannot create test database " + name, e);
    }
    return admin.withDatabase(name);
  }

  public static void drop(DbUrl db) {
    DbUrl admin = server();
    String name = db.connectOptions().getDatabase();
    try (Connection c = DriverManager.getConnection(admin.jdbcUrl(), admin.user(), admin.password());
         Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    } catch (Exception e) {
      log.warn("could not drop test database {}: {}", name, e.toString());
    }
  }
}
