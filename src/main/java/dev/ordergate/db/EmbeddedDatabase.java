package dev.ordergate.db;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;

/**
 * An embedded PostgreSQL for a newcomer with nothing but Java and Maven. Its data directory is kept
 * between runs, so orders survive a restart.
 */
public final class EmbeddedDatabase implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedDatabase.class);

  private final EmbeddedPostgres postgres;

  private EmbeddedDatabase(EmbeddedPostgres postgres) {
    this.postgres = postgres;
  }

  public static EmbeddedDatabase start(File dataDir) throws IOException {
    Files.createDirectories(dataDir.toPath());
    EmbeddedPostgres pg = EmbeddedPostgres.builder()
        .setDataDirectory(dataDir)
        .setCleanDataDirectory(false)
        .setServerConfig("max_connections", "200")
        // zonky turns synchronous_commit off for speed; a payment acknowledged must be durable.
        .setServerConfig("synchronous_commit", "on")
        .start();
    log.info("No database URL configured: started an embedded PostgreSQL on port {} with data in {}",
        pg.getPort(), dataDir.getAbsolutePath());
    return new EmbeddedDatabase(pg);
  }

  public DbUrl url() {
    return new DbUrl("postgresql://postgres@localhost:" + postgres.getPort() + "/postgres");
  }

  @Override
  public void close() throws IOException {
    postgres.close();
  }
}
