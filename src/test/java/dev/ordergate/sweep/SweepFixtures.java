package dev.ordergate.sweep;

import dev.ordergate.config.SweepConfig;
import dev.ordergate.db.Params;
import dev.ordergate.gate.CancellationEffects;
import dev.ordergate.outbox.OutboxSignal;
import dev.ordergate.outbox.OutboxWriter;
import dev.ordergate.metrics.Metrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlClient;

import java.time.Clock;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Bulk fixtures written straight in SQL (thousands of orders in one statement each), shared by the
 * sweep tests and the {@link SweepMeasure} tool. Fixture orders look like ones the API created:
 * two items each (SKU {@code SW-A} x1, {@code SW-B} x2; their stock already taken), every second
 * one with a LOCKED coupon, a creation transition.
 */
public final class SweepFixtures {

  public static final String SKU_A = "SW-A";
  public static final String SKU_B = "SW-B";
  public static final long AMOUNT_CENTS = 1000;

  private SweepFixtures() {
  }

  /**
   * {@code n} pending orders {@code prefix1..prefixN} expiring {@code expiresInSeconds} from now
   * (negative: overdue), order i a microsecond after order i-1. With {@code full} false, only the
   * order rows (enough for claim measurements).
   */
  public static void pendingOrders(SqlClient db, String prefix, int n, double expiresInSeconds, boolean full) {
    db.query("INSERT INTO inventory (sku, available) VALUES ('" + SKU_A + "', 0), ('" + SKU_B + "', 0) "
        + "ON CONFLICT (sku) DO NOTHING").execute().await();
    db.preparedQuery("""
        INSERT INTO orders (order_no, user_id, status, amount_cents, coupon_code, request_hash, expires_at)
        SELECT $1::text || g, 'su-' || $1::text || g, 'PENDING_PAYMENT', $4,
               CASE WHEN $3 AND g % 2 = 0 THEN $1::text || '-C' || g END, 'fixture',
               now() + make_interval(secs => $2) + g * interval '1 microsecond'
        FROM generate_series(1, $5) g""").execute(Params.of(prefix, expiresInSeconds, full, AMOUNT_CENTS, n)).await();
    if (!full) {
      return;
    }
    db.preparedQuery("""
        INSERT INTO order_items (order_no, sku, qty, unit_price_cents)
        SELECT $1::text || g, s.sku, s.qty, s.price
        FROM generate_series(1, $2) g, (VALUES ('SW-A', 1, 500), ('SW-B', 2, 250)) AS s(sku, qty, price)""")
        .execute(Params.of(prefix, n)).await();
    db.preparedQuery("""
        INSERT INTO coupons (code, user_id, discount_cents, status, order_no)
        SELECT $1::text || '-C' || g, 'su-' || $1::text || g, 0, 'LOCKED', $1::text || g FROM generate_series(2, $2, 2) g""")
        .execute(Params.of(prefix, n)).await();
    db.preparedQuery("""
        INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
        SELECT $1::text || g, NULL, 'PENDING_PAYMENT', 'USER', 'su-' || $1::text || g, 'create' FROM generate_series(1, $2) g""")
        .execute(Params.of(prefix, n)).await();
  }

  /** {@code n} orders cancelled long ago: rows the partial index must not contain. */
  public static void closedOrders(SqlClient db, String prefix, int n) {
    db.preparedQuery("""
        INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at, cancelled_at, closed_by)
        SELECT $1::text || g, 'x', 'CANCELLED', 100, 'fixture', now() - interval '2 days', now() - interval '1 day', 'USER'
        FROM generate_series(1, $2) g""").execute(Params.of(prefix, n)).await();
  }

  public static SweepConfig config(int batchSize, int maxBatches, long graceSeconds) {
    return config(batchSize, maxBatches, graceSeconds, SweepConfig.DEFAULTS.batchesInFlight());
  }

  public static SweepConfig config(int batchSize, int maxBatches, long graceSeconds, int batchesInFlight) {
    return SweepConfig.from(new JsonObject().put("sweep", new JsonObject()
        .put("enabled", false).put("batchSize", batchSize).put("maxBatchesPerRun", maxBatches)
        .put("batchesInFlight", batchesInFlight).put("graceSeconds", graceSeconds)));
  }

  /** A sweeper of its own (its own instance id and meters), as another instance would have. */
  public static Sweeper sweeper(Vertx vertx, Pool pool, SweepConfig config, String instanceId, BatchHook hook) {
    return sweeper(vertx, pool, config, instanceId, hook, new SimpleMeterRegistry());
  }

  public static Sweeper sweeper(Vertx vertx, Pool pool, SweepConfig config, String instanceId, BatchHook hook,
                                MeterRegistry registry) {
    return new Sweeper(vertx, pool, new CancellationEffects(new OutboxWriter(new OutboxSignal())), new SweepMetrics(new Metrics(registry)), config,
        instanceId, Clock.systemUTC(), hook);
  }

  /** Polls {@code condition} every 50 ms until it holds or {@code timeout} passes. */
  public static boolean eventually(Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return true;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return condition.getAsBoolean();
  }
}
