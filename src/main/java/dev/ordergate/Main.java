package dev.ordergate;

import dev.ordergate.config.AppConfig;
import dev.ordergate.config.ConfigException;
import dev.ordergate.config.ConfigLoader;
import dev.ordergate.db.DbUrl;
import dev.ordergate.db.EmbeddedDatabase;
import dev.ordergate.metrics.Metrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;

/**
 * Entry point: {@code serve} (the default) reads the config, starts an embedded database when no URL
 * is set, and deploys the service; {@code reconcile}, {@code drill} and {@code replay} are the
 * operator's commands ({@link dev.ordergate.tools.Tools}).
 */
public final class Main {

  private static final Logger log = LoggerFactory.getLogger(Main.class);

  private Main() {
  }

  public static void main(String[] args) throws Exception {
    String command = args.length == 0 ? "serve" : args[0];
    switch (command) {
      case "serve" -> serve();
      case "hash-password" -> System.exit(dev.ordergate.auth.HashPasswordCommand.run(
          java.util.Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
      case "reconcile", "drill", "replay", "gateway-sim", "trigger-bench", "chaos" ->
          System.exit(dev.ordergate.tools.Tools.run(command, java.util.Arrays.copyOfRange(args, 1, args.length)));
      default -> {
        System.err.println("usage: java -jar ordergate.jar [serve | reconcile | drill | replay | gateway-sim | trigger-bench | hash-password | chaos] [--help]");
        System.exit(2);
      }
    }
  }

  private static void writeOwnerOnly(Path file, String secret) throws IOException {
    Files.createDirectories(file.getParent());
    Files.deleteIfExists(file);
    var ownerOnly = PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rw-------"));
    Files.writeString(Files.createFile(file, ownerOnly), secret + "\n");
  }

  private static void serve() throws Exception {
    PrometheusMeterRegistry registry = Metrics.newRegistry();
    Vertx vertx = Metrics.vertx(registry);
    log.info("network transport: {}", vertx.isNativeTransportEnabled() ? "epoll (native)"
        : "NIO (" + vertx.unavailableNativeTransportCause() + ")");
    String path = ConfigLoader.configPath();
    AppConfig config;
    try {
      JsonObject json = ConfigLoader.retriever(vertx, path, 0).getConfig().await();
      config = AppConfig.from(json);
    } catch (ConfigException e) {
      log.error("cannot start: {} (file {})", e.getMessage(), path);
      vertx.close().await();
      System.exit(2);
      return;
    }
    if (config.apiKeyGenerated()) {
      log.warn("api.keys is not configured (dev mode); generated one for this run: {}", config.apiKeys().get(0));
    }
    if (config.devMode()) {
      log.warn("dev mode: development-only channels and keys are accepted; never take real money like this");
    }
    if (config.adminTokenGenerated()) {
      // Not into the log (logs travel): into an owner-only file the tools read with --admin-token-file.
      Path tokenFile = Path.of(config.embeddedDataDir()).toAbsolutePath().resolveSibling("admin-token");
      writeOwnerOnly(tokenFile, config.adminToken());
      log.warn("admin.token is not configured; generated one for this run, written to {} (owner-only)", tokenFile);
    }
    EmbeddedDatabase embedded = null;
    DbUrl dbUrl;
    if (config.dbUrl() == null) {
      embedded = EmbeddedDatabase.start(new File(config.embeddedDataDir()));
      dbUrl = embedded.url();
    } else {
      dbUrl = new DbUrl(config.dbUrl());
      log.info("using database {}", dbUrl.jdbcUrl());
    }
    EmbeddedDatabase db = embedded;
    long graceMs = config.server().shutdownGraceMs();
    // SIGTERM: the service drains (GracefulShutdown) and the JVM exits within shutdown.graceMs.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        vertx.close().toCompletionStage().toCompletableFuture().get(graceMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        if (db != null) {
          db.close();
        }
      } catch (Exception e) {
        log.warn("shutdown: {}", e.toString());
      }
    }, "ordergate-shutdown"));
    try {
      vertx.deployVerticle(new OrdergateVerticle(config, dbUrl, registry, Clock.systemUTC(), path)).await();
    } catch (Exception e) {
      log.error("cannot start: {}", e.toString(), e);
      System.exit(1);
    }
  }
}
