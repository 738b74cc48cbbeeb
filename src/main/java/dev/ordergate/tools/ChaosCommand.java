package dev.ordergate.tools;

import dev.ordergate.db.DbUrl;
import dev.ordergate.db.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.File;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code ordergate chaos}: the drill against the service running as a child process, while the
 * service is SIGKILLed and restarted and its PostgreSQL connections are cut; then it settles and
 * reconciles. A lost acknowledged payment, a double exit or an invariant violation exits 1.
 */
final class ChaosCommand {

  static final String HELP = """
      usage: ordergate chaos [options]

      Starts the service as a child process (this jar, its own config in a temporary directory),
      runs the drill against it (see ordergate drill --help) and, while orders are created and
      raced, alternately cuts every PostgreSQL connection of the service (pg_terminate_backend)
      and kills the service with SIGKILL, restarting it at once. Requests that get no answer or a
      503 meanwhile are counted as outages (a gateway retries them); every answer that came back
      is checked against the final state. Then the drill settles and reconciles.

      Fails (exit 1) on any anomaly, in particular: a payment answered APPLIED whose order is not
      PAID by it (a lost acknowledged payment), an order paid and cancelled, paid twice or
      cancelled twice (a double exit), or a reconciliation violation.

      Options:
        --orders N            orders (default 400)
        --seed N              the drill's schedule seed (default 1)
        --timeout-seconds S   each order's payment timeout (default 8): the window of the chaos
        --kills K             SIGKILL + restart of the service (default 2)
        --cuts C              cuts of all its database connections (default 3)
        --connections C       the drill's HTTP connections (default 32)
        --db-url URL          a PostgreSQL database to use (it should be empty); default: a
                              throw-away embedded PostgreSQL started by this command
        --report FILE         also write the report as JSON
        --work-dir DIR        where the service's config and log go (default: a temporary directory)

      Exit status: 0 no anomaly, 1 anomalies (each listed), 2 could not run.
      """;

  private final PrintStream out;

  ChaosCommand(PrintStream out) {
    this.out = out;
  }

  int run(String[] argv) throws Exception {
    Args args = Args.parse(argv, Set.of("orders", "seed", "timeout-seconds", "kills", "cuts", "connections",
        "db-url", "report", "work-dir"), Set.of());
    if (args.help()) {
      out.print(HELP);
      return Tools.OK;
    }
    int timeoutSeconds = args.intValue("timeout-seconds", 8, 2, 3600);
    Drill.Options options = new Drill.Options(
        args.intValue("orders", 400, 1, 1_000_000),
        args.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE),
        timeoutSeconds,
        args.intValue("connections", 32, 1, 4096),
        2, 50, 60, 5, 5_000,
        "CH" + Long.toString(System.currentTimeMillis(), 36).toUpperCase(), "sweep");
    int kills = args.intValue("kills", 2, 0, 100);
    int cuts = args.intValue("cuts", 3, 0, 1000);
    Path dir = args.has("work-dir") ? Path.of(args.string("work-dir", null)) : Files.createTempDirectory("ordergate-chaos");
    EmbeddedDatabase embedded = null;
    DbUrl db;
    if (args.has("db-url")) {
      db = new DbUrl(args.string("db-url", null));
    } else {
      embedded = EmbeddedDatabase.start(new File(dir.toFile(), "pg"));
      db = embedded.url();
      out.println("chaos: embedded PostgreSQL for this run in " + dir.resolve("pg"));
    }
    String token = random();
    String secret = random();
    String apiKey = random();
    JsonObject config = new JsonObject()
        .put("api", new JsonObject().put("keys", new JsonArray().add(apiKey)))
        .put("db", new JsonObject().put("url", db.uri()).put("poolSize", 8))
        .put("admin", new JsonObject().put("token", token))
        .put("sweep", new JsonObject().put("enabled", true).put("periodMs", 1000))
        .put("shutdown", new JsonObject().put("graceMs", 5000))
        .put("payments", new JsonObject().put("channels", new JsonObject().put("chaos",
            new JsonObject().put("secrets", new JsonArray().add(secret)))));
    Vertx vertx = Vertx.vertx();
    try (ServiceProcess service = ServiceProcess.start(config, dir)) {
      if (!service.awaitReady(120_000)) {
        out.println("chaos: the service did not start; its log: " + service.logFile());
        return Tools.FAILED;
      }
      out.println("chaos: service at " + service.url() + " (log " + service.logFile() + ")");
      Drill drill = new Drill(vertx, options, new ServiceClient.Target(service.url(), token, apiKey, "chaos", secret),
          null, out).tolerateOutages();
      AtomicInteger killed = new AtomicInteger();
      AtomicInteger cut = new AtomicInteger();
      AtomicBoolean chaosFailed = new AtomicBoolean();
      Thread chaos = new Thread(() -> disrupt(drill, service, db, kills, cuts, timeoutSeconds, killed, cut,
          chaosFailed), "chaos");
      chaos.setDaemon(true);
      chaos.start();
      Drill.Result result = drill.run();
      chaos.join();
      out.print(result.summary());
      long lost = result.anomalies().stream().filter(a -> a.kind().equals("ANSWER_CONTRADICTS_STATE")
          && a.detail().contains("answered APPLIED")).count();
      long doubleExits = result.anomalies().stream().filter(a -> Set.of("PAID_TWICE", "PAID_AND_CANCELLED",
          "CANCELLED_TWICE").contains(a.kind())).count();
      long violations = result.report().getJsonObject("reconciliation", new JsonObject()).getLong("violations", 0L);
      JsonObject chaosReport = new JsonObject().put("kills", killed.get()).put("cuts", cut.get())
          .put("lostAcknowledgedPayments", lost).put("doubleExits", doubleExits)
          .put("invariantViolations", violations).put("outages", result.report().getJsonObject("outages"));
      out.println("chaos: " + killed.get() + " SIGKILL+restart, " + cut.get() + " connection cuts; "
          + lost + " lost acknowledged payments, " + doubleExits + " double exits, " + violations
          + " invariant violations");
      Tools.writeReport(args.string("report", null), result.report().put("chaos", chaosReport), out);
      service.terminate();
      service.waitFor(10_000);
      if (chaosFailed.get()) {
        out.println("CHAOS FAILED: the service did not come back after a kill (log " + service.logFile() + ")");
        return Tools.ANOMALY;
      }
      out.println(result.ok() ? "CHAOS PASSED" : "CHAOS FAILED: " + result.anomalies().size() + " anomalies");
      return result.ok() ? Tools.OK : Tools.ANOMALY;
    } finally {
      vertx.close().await();
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  /** While the drill races: cuts and kills, spread over the orders' payment timeout. */
  private void disrupt(Drill drill, ServiceProcess service, DbUrl db, int kills, int cuts, int timeoutSeconds,
                       AtomicInteger killed, AtomicInteger cut, AtomicBoolean failed) {
    try {
      while (!drill.racing()) {
        Thread.sleep(20);
      }
      int actions = kills + cuts;
      long gap = Math.max(200, timeoutSeconds * 1000L / (actions + 1));
      for (int i = 0; i < actions && drill.racing(); i++) {
        Thread.sleep(gap);
        if (!drill.racing()) {
          break;   // the race ended during the gap: a disruption now would hit the settling and the reconciliation
        }
        // Alternate, starting with a cut; kills are spread among the cuts.
        boolean kill = kills > 0 && (cuts == 0 || (i % 2 == 1 && killed.get() < kills) || i - killed.get() >= cuts);
        if (kill) {
          service.kill();
          killed.incrementAndGet();
          out.println("chaos: SIGKILL, restarting");
          service.restart();
          if (!service.awaitReady(120_000)) {
            failed.set(true);
            return;
          }
          out.println("chaos: service back");
        } else {
          cut.addAndGet(cutConnections(db));
        }
      }
    } catch (Exception e) {
      out.println("chaos: disruption failed: " + e);
      failed.set(true);
    }
  }

  /** Terminates every backend of the service's database but this one; answers how many. */
  private int cutConnections(DbUrl db) throws Exception {
    try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
         Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
             + "WHERE datname = current_database() AND pid <> pg_backend_pid()")) {
      rs.next();
      out.println("chaos: cut " + rs.getInt(1) + " database connections");
      return rs.getInt(1) > 0 ? 1 : 0;
    }
  }

  private static String random() {
    byte[] b = new byte[20];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
