package dev.ordergate.sweep;

import dev.ordergate.config.SweepConfig;
import dev.ordergate.db.DbUrl;
import dev.ordergate.db.Migrations;
import dev.ordergate.db.Params;
import dev.ordergate.db.SweepSql;
import dev.ordergate.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Measures the sweep by hand (not a test: surefire does not run it). Run with {@code scripts/sweep-measure}.
 * <ol>
 *   <li>One sweep run over N overdue orders (two items each, every second one with a coupon), for
 *       several batch sizes, and the same work as one single batch (the set-based lower bound);</li>
 *   <li>the claim's cost at 10,000 vs 1,000,000 pending, not yet due orders: medians of
 *       {@code EXPLAIN ANALYZE} execution times and of client-side round trips, with nothing due and
 *       with one batch due.</li>
 * </ol>
 * Each part works on a fresh database on the server of {@code ORDERGATE_TEST_DB_URL}, dropped afterwards.
 * Options: {@code --orders N} (100000), {@code --pending a,b} (10000,1000000), {@code --repeats R} (15),
 * {@code --skip-sweep}, {@code --skip-claim}.
 */
public final class SweepMeasure {

  private SweepMeasure() {
  }

  public static void main(String[] args) {
    int orders = 100_000;
    int repeats = 15;
    int rounds = 1;
    List<Integer> pending = List.of(10_000, 1_000_000);
    boolean sweep = true;
    boolean claim = true;
    int lateOrders = 0;
    int lateSpread = 20;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--orders" -> orders = Integer.parseInt(args[++i]);
        case "--repeats" -> repeats = Integer.parseInt(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--pending" -> pending = java.util.Arrays.stream(args[++i].split(",")).map(Integer::valueOf).toList();
        case "--skip-sweep" -> sweep = false;
        case "--skip-claim" -> claim = false;
        case "--lateness" -> {
          String[] v = args[++i].split(",");
          lateOrders = Integer.parseInt(v[0]);
          lateSpread = v.length > 1 ? Integer.parseInt(v[1]) : 20;
        }
        default -> {
          System.err.println("usage: SweepMeasure [--orders N] [--pending a,b] [--repeats R] [--rounds R] [--skip-sweep] [--skip-claim]"
              + " [--lateness ORDERS,SECONDS]");
          System.exit(2);
        }
      }
    }
    Vertx vertx = Vertx.vertx();
    try {
      if (sweep) {
        measureSweeps(vertx, orders, rounds);
      }
      if (claim) {
        measureClaims(vertx, pending, repeats);
      }
      if (lateOrders > 0) {
        measureLateness(vertx, lateOrders, lateSpread);
      }
    } finally {
      vertx.close().await();
    }
  }

  private record Db(DbUrl url, Pool pool) implements AutoCloseable {
    static Db fresh(Vertx vertx) {
      DbUrl url = TestDatabase.freshDatabase();
      Migrations.migrate(url);
      Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(4)).connectingTo(url.connectOptions())
          .using(vertx).build();
      return new Db(url, pool);
    }

    @Override
    public void close() {
      pool.close().await();
      TestDatabase.drop(url);
    }
  }

  // ---- 1. one run over N overdue orders -------------------------------------------------------

  private static void measureSweeps(Vertx vertx, int n, int rounds) {
    try (Db db = Db.fresh(vertx)) {
      System.out.println(db.pool.query("SELECT version()").execute().await().iterator().next().getString(0)
          + "; cores: " + Runtime.getRuntime().availableProcessors());
      System.out.printf(Locale.ROOT, "%n## Sweeping %,d overdue orders (2 items each, half with a coupon), %d round(s)%n%n",
          n, rounds);
      System.out.println("| batchSize x maxBatchesPerRun | runs | batches | cancelled | seconds: median (min..max) | orders/s (median) |");
      System.out.println("|---|---|---|---|---|---|");
      int[][] shapes = {{500, 50}, {500, n / 500 + 1}, {2_000, n / 2_000 + 1}, {n, 1}};
      for (int[] shape : shapes) {
        List<Double> times = new ArrayList<>();
        int[] counts = new int[3];
        for (int round = 0; round < rounds; round++) {
          times.add(sweepOnce(vertx, db, n, shape, counts));
        }
        List<Double> sorted = new ArrayList<>(times);
        Collections.sort(sorted);
        double median = median(times);
        System.out.printf(Locale.ROOT, "| %d x %d | %d | %d | %,d | %.2f (%.2f..%.2f) | %,.0f |%n",
            shape[0], shape[1], counts[0], counts[1], counts[2], median, sorted.get(0), sorted.get(sorted.size() - 1),
            counts[2] / median);
      }
    }
  }

  /** One full sweep of n fresh overdue orders with the given shape; seconds; counts = runs, batches, cancelled. */
  private static double sweepOnce(Vertx vertx, Db db, int n, int[] shape, int[] counts) {
    db.pool.query("TRUNCATE orders, order_items, order_transitions, inventory, inventory_ledger, coupons, "
        + "sweep_runs CASCADE").execute().await();
    SweepFixtures.pendingOrders(db.pool, "SW", n, -60, true);
    db.pool.query("VACUUM ANALYZE").execute().await();
    SweepConfig cfg = SweepFixtures.config(shape[0], shape[1], 0);
    Sweeper sweeper = SweepFixtures.sweeper(vertx, db.pool, cfg, "measure", BatchHook.NONE);
    long t0 = System.nanoTime();
    int runs = 0;
    int batches = 0;
    int cancelled = 0;
    while (cancelled < n) {
      SweepRun run = sweeper.runNow().await();
      if (run.error() != null) {
        throw new IllegalStateException(run.error());
      }
      runs++;
      batches += run.batches();
      cancelled += run.cancelled();
      if (run.cancelled() == 0) {
        break;
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    long check = db.pool.query("SELECT count(*) FROM orders WHERE status = 'CANCELLED'").execute().await()
        .iterator().next().getLong(0);
    if (check != n) {
      throw new IllegalStateException("cancelled " + check + " of " + n);
    }
    counts[0] = runs;
    counts[1] = batches;
    counts[2] = cancelled;
    return seconds;
  }

  // ---- 2. the claim at N pending, not yet due orders ------------------------------------------

  private static void measureClaims(Vertx vertx, List<Integer> sizes, int repeats) {
    System.out.printf(Locale.ROOT, "%n## The claim (batch of 500) at N pending, not yet due orders; medians of %d%n%n", repeats);
    System.out.println("| pending N | due | EXPLAIN ANALYZE execution ms | planning ms | round trip ms | rows | plan |");
    System.out.println("|---|---|---|---|---|---|---|");
    List<double[]> results = new ArrayList<>();
    for (int n : sizes) {
      try (Db db = Db.fresh(vertx)) {
        SweepFixtures.pendingOrders(db.pool, "P", n, 3_600, false);
        db.pool.query("VACUUM ANALYZE orders").execute().await();
        double[] none = claim(db.pool, repeats);
        print(n, 0, none);
        SweepFixtures.pendingOrders(db.pool, "D", 500, -60, false);
        db.pool.query("ANALYZE orders").execute().await();
        double[] due = claim(db.pool, repeats);
        print(n, 500, due);
        results.add(none);
        results.add(due);
      }
    }
    if (results.size() == 4) {
      System.out.printf(Locale.ROOT, "%nratio %,d / %,d pending: nothing due %.2f (execution) %.2f (round trip); "
              + "500 due %.2f (execution) %.2f (round trip)%n", sizes.get(1), sizes.get(0),
          results.get(2)[0] / results.get(0)[0], results.get(2)[2] / results.get(0)[2],
          results.get(3)[0] / results.get(1)[0], results.get(3)[2] / results.get(1)[2]);
    }
  }

  private static void print(int n, int due, double[] r) {
    System.out.printf(Locale.ROOT, "| %,d | %d | %.3f | %.3f | %.3f | %d | %s |%n", n, due, r[0], r[1], r[2],
        (int) r[3], r[4] == 1 ? "Index Scan orders_pending_expiry" : "OTHER");
  }

  /** Execution and planning time from EXPLAIN ANALYZE, and the client round trip, each in a rolled-back transaction. */
  private static double[] claim(Pool pool, int repeats) {
    List<Double> exec = new ArrayList<>();
    List<Double> plan = new ArrayList<>();
    List<Double> trip = new ArrayList<>();
    int[] rows = new int[1];
    boolean[] usesIndex = {true};
    for (int i = 0; i < repeats; i++) {
      pool.withConnection(conn -> conn.query("BEGIN").execute()
          .compose(v -> conn.preparedQuery("EXPLAIN (ANALYZE, FORMAT JSON) " + SweepSql.CLAIM_DUE)
              .execute(Params.of(0L, 500)))
          .map(r -> {
            JsonObject top = ((JsonArray) r.iterator().next().getValue(0)).getJsonObject(0);
            exec.add(top.getDouble("Execution Time"));
            plan.add(top.getDouble("Planning Time"));
            usesIndex[0] &= top.encode().contains("\"Index Name\":\"orders_pending_expiry\"");
            return null;
          })
          .eventually(() -> conn.query("ROLLBACK").execute())).await();
      pool.withConnection(conn -> conn.query("BEGIN").execute()
          .compose(v -> {
            long t0 = System.nanoTime();
            return conn.preparedQuery(SweepSql.CLAIM_DUE).execute(Params.of(0L, 500)).map(r -> {
              trip.add((System.nanoTime() - t0) / 1e6);
              rows[0] = r.size();
              return null;
            });
          })
          .eventually(() -> conn.query("ROLLBACK").execute())).await();
    }
    return new double[] {median(exec), median(plan), median(trip), rows[0], usesIndex[0] ? 1 : 0};
  }

  // ---- 3. precise mode: lateness of orders expiring over a few seconds ------------------------

  private static void measureLateness(Vertx vertx, int n, int spreadSeconds) {
    try (Db db = Db.fresh(vertx)) {
      // n orders expiring evenly over spreadSeconds, starting 3 s from now; the sweeper is already running.
      SweepConfig cfg = SweepConfig.from(new JsonObject().put("sweep", new JsonObject()
          .put("enabled", true).put("precise", true).put("periodMs", 60_000).put("minDelayMs", 200)));
      Sweeper sweeper = SweepFixtures.sweeper(vertx, db.pool, cfg, "lateness", BatchHook.NONE);
      sweeper.start().await();
      db.pool.query("INSERT INTO inventory (sku, available) VALUES ('SW-A', 0), ('SW-B', 0)").execute().await();
      db.pool.preparedQuery("""
          INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
          SELECT 'L' || g, 'u' || g, 'PENDING_PAYMENT', 1000, 'fixture',
                 now() + interval '3 seconds' + make_interval(secs => $2::float8 * g / $1)
          FROM generate_series(1, $1) g""").execute(Params.of(n, spreadSeconds)).await();
      db.pool.query("""
          INSERT INTO order_items (order_no, sku, qty, unit_price_cents)
          SELECT order_no, 'SW-A', 1, 500 FROM orders UNION ALL SELECT order_no, 'SW-B', 2, 250 FROM orders""")
          .execute().await();
      // Nobody told the sweeper about these orders (they bypassed the API): tell it once, as the API would.
      sweeper.orderCreated(new JsonObject().put("expiresAt",
          db.pool.query("SELECT min(expires_at) FROM orders").execute().await().iterator().next()
              .getOffsetDateTime(0).toInstant().toString()));
      long deadline = System.currentTimeMillis() + (spreadSeconds + 60) * 1000L;
      while (System.currentTimeMillis() < deadline && db.pool.query(
          "SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT'").execute().await().iterator().next().getLong(0) > 0) {
        sleep(500);
      }
      sweeper.stop().await();
      var r = db.pool.query("""
          SELECT count(*) AS n,
                 percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM cancelled_at - expires_at)) AS p50,
                 percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM cancelled_at - expires_at)) AS p99,
                 max(extract(epoch FROM cancelled_at - expires_at)) AS max,
                 (SELECT count(*) FROM sweep_runs) AS runs
          FROM orders WHERE status = 'CANCELLED'""").execute().await().iterator().next();
      System.out.printf(Locale.ROOT, "%n## Precise mode: %,d orders expiring over %d s (period 60 s, minDelayMs 200)%n%n"
              + "cancelled %,d in %d runs; lateness (cancelledAt - expiresAt) p50 %.3f s, p99 %.3f s, max %.3f s%n",
          n, spreadSeconds, r.getLong("n"), r.getLong("runs"), r.getDouble("p50"), r.getDouble("p99"),
          r.getDouble("max"));
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }
}
