package dev.ordergate.tools;

import dev.ordergate.OrdergateVerticle;
import dev.ordergate.broker.BrokerTier;
import dev.ordergate.config.AppConfig;
import dev.ordergate.db.DbUrl;
import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Params;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * {@code ordergate trigger-bench}: the three trigger tiers side by side (issue 12). N orders expiring
 * over S seconds; cancellation lateness (cancelledAt - expiresAt) for the precise sweep, the broker
 * tier with its fallback sweep (two instances: the share each made), and the fallback sweep alone
 * at its period; reminder lateness (sentAt - dueAt) for the database scan and for Redis expiry
 * events, with and without unrelated keys with TTLs in the same Redis database. Each case runs
 * in-process services on a scratch database of its own (dropped afterwards); broker queues and
 * Redis keys carry this run's prefix and are deleted afterwards. Performance numbers only: nothing
 * is asserted.
 */
final class TriggerBenchCommand {

  static final String HELP = """
      usage: ordergate trigger-bench [options]

        --db-url URL          any database on the PostgreSQL server; scratch databases are made next
                              to it (default postgresql://postgres@127.0.0.1:5432/postgres)
        --orders N            orders per case (default 20000)
        --spread-seconds S    their expiries spread over S seconds (default 20)
        --lead-seconds L      the first expiry L seconds after the fixture (default 10)
        --fallback-ms M       the fallback sweep's period (default 300000)
        --broker-uri URI      RabbitMQ (default amqp://guest:guest@127.0.0.1:5672/%2F)
        --redis-url URL       Redis, with the DB index the keys go to (default redis://127.0.0.1:6379/12)
        --noise-keys K        unrelated keys with a 1 h TTL for the last reminder case (default 200000)
        --scan-ms M           the reminder scan's period (default 1000)
        --report FILE         the results as JSON
        --markdown FILE       the results as a markdown section
      """;

  private static final String ADMIN = "bench-admin-token-0123456789";
  private static final int REMINDER_LEAD_SECONDS = 60;
  private static final int FALLBACK_GRACE_SECONDS = 5;

  private final PrintStream out;
  private String adminUrl;
  private int orders;
  private int spread;
  private int lead;
  private long fallbackMs;
  private String brokerUri;
  private String redisUrl;
  private int noiseKeys;
  private long scanMs;
  private final String tag = "tb" + Long.toString(System.currentTimeMillis(), 36);

  TriggerBenchCommand(PrintStream out) {
    this.out = out;
  }

  int run(String[] argv) throws Exception {
    Args args = Args.parse(argv, Set.of("db-url", "orders", "spread-seconds", "lead-seconds", "fallback-ms",
        "broker-uri", "redis-url", "noise-keys", "scan-ms", "report", "markdown"), Set.of());
    if (args.help()) {
      out.print(HELP);
      return Tools.OK;
    }
    adminUrl = args.string("db-url", "postgresql://postgres@127.0.0.1:5432/postgres");
    orders = args.intValue("orders", 20_000, 10, 1_000_000);
    spread = args.intValue("spread-seconds", 20, 1, 3600);
    lead = args.intValue("lead-seconds", 10, 2, 3600);
    fallbackMs = args.integer("fallback-ms", 300_000, 1_000, 86_400_000);
    brokerUri = args.string("broker-uri", "amqp://guest:guest@127.0.0.1:5672/%2F");
    redisUrl = args.string("redis-url", "redis://127.0.0.1:6379/12");
    noiseKeys = args.intValue("noise-keys", 200_000, 0, 10_000_000);
    scanMs = args.integer("scan-ms", 1_000, 50, 600_000);
    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("dev.ordergate"))
        .setLevel(ch.qos.logback.classic.Level.WARN);

    JsonObject report = new JsonObject().put("orders", orders).put("spreadSeconds", spread)
        .put("leadSeconds", lead).put("fallbackMs", fallbackMs).put("loadAtStart", load());
    long t0 = System.nanoTime();
    // The fallback alone waits a whole period: it runs in the background while the others are measured.
    CompletableFuture<JsonObject> fallbackAlone = CompletableFuture.supplyAsync(this::fallbackAlone);
    JsonArray rows = new JsonArray();
    rows.add(preciseSweep());
    rows.add(brokerTier());
    rows.add(reminders("reminders: database scan every " + scanMs + " ms", false, 0));
    rows.add(reminders("reminders: Redis expiry events, no other keys in the DB", true, 0));
    if (noiseKeys > 0) {
      rows.add(reminders(String.format(Locale.ROOT, "reminders: Redis expiry events, %,d unrelated keys (TTL 1 h) in the same DB",
          noiseKeys), true, noiseKeys));
    }
    rows.add(1, fallbackAlone.get());
    report.put("rows", rows).put("loadAtEnd", load()).put("seconds", (System.nanoTime() - t0) / 1e9);
    String md = markdown(report);
    out.print(md);
    Tools.writeReport(args.string("report", null), report, out);
    String mdFile = args.string("markdown", null);
    if (mdFile != null) {
      Files.writeString(Path.of(mdFile), md, StandardCharsets.UTF_8);
    }
    return Tools.OK;
  }

  // ---- cases ----------------------------------------------------------------------------------

  private JsonObject preciseSweep() {
    return withDb("precise", db -> {
      List<Instance> apps = start(db, 1, base().put("sweep", sweep(true, 60_000)));
      fixture(db, 0, false);
      apps.get(0).verticle.sweeper().runNow().await();
      waitFor(() -> pending(db) == 0, lead + spread + 120);
      JsonObject row = lateness(db, "cancelled_at - expires_at", "orders WHERE status = 'CANCELLED'")
          .put("case", "cancellation: precise sweep (sweep.precise, periodMs 60000)");
      stop(apps);
      return row;
    });
  }

  private JsonObject fallbackAlone() {
    return withDb("fallback", db -> {
      List<Instance> apps = start(db, 1, base().put("sweep", sweep(false, fallbackMs)));
      fixture(db, 0, false);
      waitFor(() -> pending(db) == 0, lead + spread + fallbackMs / 1000 + 120);
      JsonObject row = lateness(db, "cancelled_at - expires_at", "orders WHERE status = 'CANCELLED'")
          .put("case", "cancellation: fallback sweep alone, periodMs " + fallbackMs
              + " (one phase of the period; expect anything in 0..period)");
      stop(apps);
      return row;
    });
  }

  private JsonObject brokerTier() {
    return withDb("broker", db -> {
      String prefix = "ogbench-" + tag;
      // The fallback's grace keeps it out of the messages' way: it cancels only what they missed.
      JsonObject config = base().put("sweep", sweep(false, fallbackMs).put("graceSeconds", FALLBACK_GRACE_SECONDS))
          .put("outbox", new JsonObject().put("enabled", true).put("pollMs", 200).put("batchSize", 500))
          .put("triggers", new JsonObject().put("broker", new JsonObject().put("enabled", true)
              .put("uri", brokerUri).put("prefix", prefix)));
      List<Instance> apps = start(db, 2, config);
      waitFor(() -> apps.stream().allMatch(a -> a.verticle.broker().ready()), 60);
      fixture(db, 0, true);
      waitFor(() -> pending(db) == 0, lead + spread + fallbackMs / 1000 + 120);
      JsonObject row = lateness(db, "cancelled_at - expires_at", "orders WHERE status = 'CANCELLED'")
          .put("case", "cancellation: broker tier (2 instances), fallback sweep every " + fallbackMs + " ms, grace "
              + FALLBACK_GRACE_SECONDS + " s");
      JsonObject share = new JsonObject();
      for (Row r : query(db, "SELECT source || ' ' || actor AS who, count(*) FROM order_transitions "
          + "WHERE from_status = 'PENDING_PAYMENT' GROUP BY 1 ORDER BY 1")) {
        share.put(r.getString(0), r.getLong(1));
      }
      row.put("share", share).put("fallbackCaught",
          query(db, "SELECT count(*) FROM orders WHERE closed_by = 'TIMEOUT_SWEEP'").get(0).getLong(0));
      stop(apps);
      Vertx v = Vertx.vertx();
      try {
        BrokerTier.deleteTopology(v, AppConfig.from(config).broker()).await();
      } finally {
        v.close().await();
      }
      return row;
    });
  }

  private JsonObject reminders(String name, boolean redis, int noise) {
    return withDb(redis ? (noise > 0 ? "redisnoise" : "redis") : "scan", db -> {
      String prefix = "ogbench-" + tag + ":";
      JsonObject r = new JsonObject().put("beforeSeconds", REMINDER_LEAD_SECONDS)
          .put("scanMs", redis ? 3_600_000 : scanMs);
      if (redis) {
        r.put("redis", new JsonObject().put("enabled", true).put("url", redisUrl).put("keyPrefix", prefix));
      }
      Vertx v = Vertx.vertx();
      Redis api = redis ? Redis.createClient(v, new RedisOptions().setConnectionString(redisUrl).setMaxPoolWaiting(10_000))
          : null;
      String notifyBefore = redis ? api.send(Request.cmd(Command.CONFIG).arg("GET").arg("notify-keyspace-events"))
          .await().get("notify-keyspace-events").toString() : null;
      try {
        if (noise > 0) {
          fill(api, prefix + "noise:", noise);
        }
        List<Instance> apps = start(db, 1, base().put("reminders", r).put("outbox", new JsonObject().put("enabled", false)));
        if (redis) {
          waitFor(() -> Boolean.TRUE.equals(apps.get(0).verticle.reminders().redisSubscribed()), 30);
        }
        fixture(db, REMINDER_LEAD_SECONDS, false);
        if (redis) {
          // The keys the service writes after each creation (the fixture bypassed the API).
          List<Request> sets = new ArrayList<>();
          for (Row row : query(db, "SELECT order_no, (extract(epoch FROM expires_at) * 1000)::bigint - "
              + REMINDER_LEAD_SECONDS * 1000 + " FROM orders")) {
            sets.add(Request.cmd(Command.SET).arg(prefix + row.getString(0)).arg("1").arg("PXAT").arg(row.getLong(1)));
          }
          batches(api, sets);
        }
        long waitSeconds = lead + spread + (redis ? 60 : 120);
        waitFor(() -> count(db, "SELECT count(*) FROM payment_reminders") >= orders, waitSeconds);
        JsonObject row = lateness(db, "sent_at - due_at", "payment_reminders").put("case", name)
            .put("waitedSeconds", waitSeconds);
        stop(apps);
        return row;
      } finally {
        if (redis) {
          delete(api, prefix + "*");
          if (notifyBefore.isEmpty()) {
            api.send(Request.cmd(Command.CONFIG).arg("SET").arg("notify-keyspace-events").arg("")).await();
          }
        }
        v.close().await();
      }
    });
  }

  // ---- services and fixtures -------------------------------------------------------------------

  private record Instance(Vertx vertx, OrdergateVerticle verticle, String database) {}

  private static JsonObject base() {
    return new JsonObject()
        .put("http", new JsonObject().put("host", "127.0.0.1").put("port", 0))
        .put("management", new JsonObject().put("host", "127.0.0.1").put("port", 0))
        .put("admin", new JsonObject().put("token", ADMIN))
        .put("db", new JsonObject().put("poolSize", 10))
        .put("outbox", new JsonObject().put("enabled", false))
        .put("sweep", new JsonObject().put("enabled", false));
  }

  private static JsonObject sweep(boolean precise, long periodMs) {
    return new JsonObject().put("enabled", true).put("precise", precise).put("periodMs", periodMs)
        .put("minDelayMs", 200).put("configScanMs", 0);
  }

  /** Instances of the running case (stopped by {@link #withDb} if the case fails halfway). */
  private final List<Instance> live = new java.util.concurrent.CopyOnWriteArrayList<>();

  private List<Instance> start(DbUrl db, int n, JsonObject config) {
    List<Instance> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Vertx vertx = Vertx.vertx();
      Instance instance = new Instance(vertx, new OrdergateVerticle(AppConfig.from(config), db,
          new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), Clock.systemUTC()), db.connectOptions().getDatabase());
      live.add(instance);
      vertx.deployVerticle(instance.verticle).await();
      out.add(instance);
    }
    return out;
  }

  private void stop(List<Instance> apps) {
    for (Instance a : apps) {
      if (live.remove(a)) {
        a.vertx.close().await();
      }
    }
  }

  /**
   * N orders expiring {@code lead + extraSeconds} to {@code lead + extraSeconds + spread} seconds
   * from now (evenly), 2 items each over 200 SKUs; with {@code timeoutMessages}, their
   * ORDER_TIMEOUT events as order creation writes them.
   */
  private void fixture(DbUrl db, int extraSeconds, boolean timeoutMessages) {
    exec(db, "INSERT INTO inventory (sku, available) SELECT 'SKU-' || s, 0 FROM generate_series(0, 199) s");
    exec(db, String.format(Locale.ROOT, """
        INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
        SELECT 'B' || g, 'u' || g, 'PENDING_PAYMENT', 1000, 'fixture',
               now() + make_interval(secs => %d + %d::float8 * g / %d)
        FROM generate_series(1, %d) g""", lead + extraSeconds, spread, orders, orders));
    exec(db, "INSERT INTO order_items (order_no, sku, qty, unit_price_cents) "
        + "SELECT order_no, 'SKU-' || (substr(order_no, 2)::int % 200), 2, 500 FROM orders");
    if (timeoutMessages) {
      withPool(db, pool -> pool.preparedQuery(OutboxSql.INSERT_TIMEOUT_EVENTS)
          .execute(Params.array(query(db, "SELECT order_no FROM orders").stream().map(r -> r.getString(0))
              .toArray(String[]::new))).mapEmpty());
    }
  }

  private JsonObject lateness(DbUrl db, String expr, String from) {
    Row r = query(db, "SELECT count(*), "
        + "percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM " + expr + ")), "
        + "percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM " + expr + ")), "
        + "max(extract(epoch FROM " + expr + ")) FROM " + from).get(0);
    return new JsonObject().put("done", r.getLong(0)).put("of", orders)
        .put("p50", round(r.getDouble(1))).put("p99", round(r.getDouble(2))).put("max", round(r.getDouble(3)));
  }

  private static Double round(Double d) {
    return d == null ? null : Math.round(d * 1000) / 1000.0;
  }

  private static long pending(DbUrl db) {
    return count(db, "SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT'");
  }

  private static long count(DbUrl db, String sql) {
    return query(db, sql).get(0).getLong(0);
  }

  private static void waitFor(BooleanSupplier done, long seconds) {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!done.getAsBoolean() && System.nanoTime() < deadline) {
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  // ---- databases, Redis ----------------------------------------------------------------------

  private interface DbCase {
    JsonObject run(DbUrl db) throws Exception;
  }

  private JsonObject withDb(String name, DbCase body) {
    DbUrl admin = new DbUrl(adminUrl);
    String db = tag + "_" + name;
    admin(admin, "CREATE DATABASE " + db);
    DbUrl url = admin.withDatabase(db);
    try {
      return body.run(url);
    } catch (Exception e) {
      return new JsonObject().put("case", name).put("error", e.toString());
    } finally {
      stop(live.stream().filter(i -> i.database().equals(db)).toList());
      admin(admin, "DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
    }
  }

  private static void admin(DbUrl admin, String sql) {
    try (Connection c = DriverManager.getConnection(admin.jdbcUrl(), admin.user(), admin.password());
         Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (Exception e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  private static void exec(DbUrl db, String sql) {
    withPool(db, pool -> pool.query(sql).execute().mapEmpty());
  }

  private static List<Row> query(DbUrl db, String sql) {
    List<Row> rows = new ArrayList<>();
    withPool(db, pool -> pool.query(sql).execute().map(rs -> {
      rs.forEach(rows::add);
      return null;
    }));
    return rows;
  }

  private static void withPool(DbUrl db, java.util.function.Function<Pool, Future<Void>> work) {
    Vertx v = Vertx.vertx();
    Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(1)).connectingTo(db.connectOptions()).using(v).build();
    try {
      work.apply(pool).await();
    } finally {
      pool.close().await();
      v.close().await();
    }
  }

  private static void fill(Redis api, String prefix, int n) {
    List<Request> sets = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sets.add(Request.cmd(Command.SET).arg(prefix + i).arg("x").arg("EX").arg(3600));
    }
    batches(api, sets);
  }

  private static void batches(Redis api, List<Request> requests) {
    for (int i = 0; i < requests.size(); i += 1000) {
      List<Future<Response>> sent = new ArrayList<>();
      for (Request r : requests.subList(i, Math.min(requests.size(), i + 1000))) {
        sent.add(api.send(r));
      }
      Future.all(sent).await();
    }
  }

  private static void delete(Redis api, String pattern) {
    String cursor = "0";
    do {
      Response page = api.send(Request.cmd(Command.SCAN).arg(cursor).arg("MATCH").arg(pattern).arg("COUNT").arg(5000))
          .await();
      cursor = page.get(0).toString();
      Request unlink = Request.cmd(Command.UNLINK);
      int n = 0;
      for (Response k : page.get(1)) {
        unlink.arg(k.toString());
        n++;
      }
      if (n > 0) {
        api.send(unlink).await();
      }
    } while (!"0".equals(cursor));
  }

  private static double load() {
    return Math.round(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage() * 100) / 100.0;
  }

  // ---- report ------------------------------------------------------------------------------

  private String markdown(JsonObject report) {
    StringBuilder sb = new StringBuilder();
    String nl = "\n";
    sb.append("### Trigger tiers (issue 12): ").append(String.format(Locale.ROOT, "%,d", orders))
        .append(" orders expiring over ").append(spread).append(" s").append(nl).append(nl);
    sb.append("| case | done | lateness p50 / p99 / max (s) | notes |").append(nl);
    sb.append("|---|---|---|---|").append(nl);
    for (Object o : report.getJsonArray("rows")) {
      JsonObject r = (JsonObject) o;
      if (r.containsKey("error")) {
        sb.append("| ").append(r.getString("case")).append(" | - | - | FAILED: ").append(r.getString("error")).append(" |").append(nl);
        continue;
      }
      StringBuilder notes = new StringBuilder();
      if (r.containsKey("share")) {
        notes.append("share: ");
        r.getJsonObject("share").forEach(e -> notes.append(e.getKey()).append(' ').append(e.getValue()).append("; "));
        notes.append("fallback caught ").append(r.getLong("fallbackCaught"));
      }
      if (r.containsKey("waitedSeconds") && r.getLong("done") < orders) {
        notes.append(r.getLong("done")).append(" of ").append(orders).append(" sent within ")
            .append(r.getLong("waitedSeconds")).append(" s of the fixture; the rest never fired in time");
      }
      sb.append("| ").append(r.getString("case")).append(" | ").append(r.getLong("done")).append(" of ")
          .append(r.getLong("of")).append(" | ").append(r.getValue("p50")).append(" / **").append(r.getValue("p99"))
          .append("** / ").append(r.getValue("max")).append(" | ").append(notes).append(" |").append(nl);
    }
    sb.append(nl).append(String.format(Locale.ROOT, "Load average (1 min) at start / end: %.2f / %.2f; %.0f s in all. "
            + "The machine is shared with other builds: treat single runs as noisy.%n",
        report.getDouble("loadAtStart"), report.getDouble("loadAtEnd"), report.getDouble("seconds")));
    return sb.toString();
  }
}
