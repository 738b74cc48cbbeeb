package dev.ordergate.db;

import org.flywaydb.core.Flyway;

/** Applies {@code db/migration} with Flyway. Blocking: call it from a worker. */
public final class Migrations {

  private Migrations() {
  }

  public static int migrate(DbUrl url) {
    return Flyway.configure()
        .dataSource(url.jdbcUrl(), url.user(), url.password())
        .locations("classpath:db/migration")
        .load()
        .migrate()
        .migrationsExecuted;
  }
}
