package dev.ordergate.tools;

import dev.ordergate.OrdergateVerticle;
import dev.ordergate.config.AppConfig;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.config.ConfigLoader;
import dev.ordergate.db.DbUrl;
import dev.ordergate.db.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The service started inside a tool's JVM (the self-contained drill) on the configured database,
 * or, when no {@code db.url} is configured, on a throw-away embedded PostgreSQL.
 */
final class LocalService implements AutoCloseable {

  final AppConfig config;
  final DbUrl db;
  final String url;
  final OrdergateVerticle verticle;
  private final Vertx vertx;
  private final String deploymentId;
  private final EmbeddedDatabase embedded;
  private final Path embeddedDir;

  private LocalService(AppConfig config, DbUrl db, String url, OrdergateVerticle verticle, Vertx vertx,
                       String deploymentId, EmbeddedDatabase embedded, Path embeddedDir) {
    this.config = config;
    this.db = db;
    this.url = url;
    this.verticle = verticle;
    this.vertx = vertx;
    this.deploymentId = deploymentId;
    this.embedded = embedded;
    this.embeddedDir = embeddedDir;
  }

  /** The operator's config file (ORDERGATE_CONF, else conf/config.json) with the environment overrides. */
  static JsonObject configJson(Vertx vertx) {
    return ConfigLoader.retriever(vertx, ConfigLoader.configPath(), 0).getConfig().await();
  }

  /** Deploys the service on an ephemeral local port; {@code dbUrl} null = configured or embedded. */
  static LocalService start(Vertx vertx, JsonObject json, String dbUrl, PrintStream out) throws IOException {
    JsonObject local = json.copy();
    local.put("http", new JsonObject().put("host", "127.0.0.1").put("port", 0));
    local.remove("ORDERGATE_HTTP_PORT");
    local.put("management", new JsonObject().put("host", "127.0.0.1").put("port", 0));
    local.remove("ORDERGATE_MANAGEMENT_PORT");
    AppConfig config = AppConfig.from(local);
    EmbeddedDatabase embedded = null;
    Path dir = null;
    DbUrl db;
    if (dbUrl != null) {
      db = new DbUrl(dbUrl);
    } else if (config.dbUrl() != null) {
      db = new DbUrl(config.dbUrl());
    } else {
      dir = Files.createTempDirectory("ordergate-drill-pg");
      embedded = EmbeddedDatabase.start(dir.toFile());
      db = embedded.url();
      out.println("no db.url configured: using a throw-away embedded PostgreSQL in " + dir);
    }
    OrdergateVerticle verticle = new OrdergateVerticle(config, db,
        dev.ordergate.metrics.Metrics.newRegistry(), Clock.systemUTC());
    String id = vertx.deployVerticle(verticle).await();
    String url = "http://127.0.0.1:" + verticle.port();
    out.println("started the service in-process at " + url + " on " + db.jdbcUrl());
    return new LocalService(config, db, url, verticle, vertx, id, embedded, dir);
  }

  /**
   * The first configured ordergate channel (or {@code name}) and its first secret. A sandbox channel
   * of a gateway kind is driven by its simulated gateway (conf/sandbox/gateway-sim.json).
   */
  ServiceClient.Target target(String channelName) {
    ChannelConfig named = channelName == null ? null : config.channels().get(channelName);
    if (named != null && named.kind() != dev.ordergate.channel.ChannelKind.ORDERGATE) {
      try {
        var sim = dev.ordergate.sim.SimConfig.load(dev.ordergate.sim.SimConfig.DEFAULT_PATH).gateways().values().stream()
            .filter(t -> t.channel().equals(channelName)).findFirst()
            .orElseThrow(() -> new Args.UsageException("channel " + channelName + " has no simulated gateway in "
                + dev.ordergate.sim.SimConfig.DEFAULT_PATH));
        return new ServiceClient.Target(url, config.adminToken(), config.apiKeys().get(0), channelName, null,
            sim.gateway());
      } catch (java.io.IOException e) {
        throw new Args.UsageException("cannot read " + dev.ordergate.sim.SimConfig.DEFAULT_PATH + ": " + e.getMessage());
      }
    }
    ChannelConfig channel = channelName != null ? named
        : config.channels().values().stream().filter(c -> c.kind() == dev.ordergate.channel.ChannelKind.ORDERGATE)
            .sorted(Comparator.comparing(ChannelConfig::name)).findFirst().orElse(null);
    if (channel == null || channel.secrets().isEmpty()) {
      throw new Args.UsageException(channelName == null ? "no payment channel of kind ordergate configured"
          : "no channel " + channelName + " of kind ordergate");
    }
    return new ServiceClient.Target(url, config.adminToken(), config.apiKeys().get(0), channel.name(),
        channel.secrets().get(0));
  }

  @Override
  public void close() throws IOException {
    vertx.undeploy(deploymentId).await();
    if (embedded != null) {
      embedded.close();
      try (Stream<Path> files = Files.walk(embeddedDir)) {
        files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      }
    }
  }
}
