package dev.ordergate.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;

import java.util.concurrent.TimeUnit;

/**
 * {@code ordergate_database_ready}: 1 when {@code SELECT 1} answered within 2 s at the last probe,
 * 0 when it did not (the alert "database not ready" reads it; {@code /health/ready} asks on demand).
 * Probes every {@code periodMs}, re-armed after each probe finished.
 */
public final class DatabaseProbe {

  public static final long PERIOD_MS = 5_000;

  private final Vertx vertx;
  private final Pool pool;
  private final long periodMs;
  private volatile double ready = Double.NaN;
  private volatile boolean stopped;
  private long timerId = -1;

  public DatabaseProbe(Vertx vertx, Pool pool, MeterRegistry registry, long periodMs) {
    this.vertx = vertx;
    this.pool = pool;
    this.periodMs = periodMs;
    Gauge.builder("ordergate.database.ready", this, p -> p.ready)
        .description("1: the database answered the last probe (every 5 s), 0: it did not; NaN before the first")
        .register(registry);
  }

  public void start() {
    probe();
  }

  public void stop() {
    stopped = true;
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
    }
  }

  private void probe() {
    if (stopped) {
      return;
    }
    pool.query("SELECT 1").execute().timeout(2, TimeUnit.SECONDS)
        .onComplete(ar -> {
          ready = ar.succeeded() ? 1 : 0;
          if (!stopped) {
            timerId = vertx.setTimer(periodMs, id -> probe());
          }
        });
  }
}
