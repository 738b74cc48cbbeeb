package dev.ordergate.http;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.sqlclient.Pool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Liveness, readiness and Prometheus metrics. Ready: the database answers, and the callback pipeline is
 * not stalled (no callback that could run has waited for a transaction slot longer than
 * {@code callbacks.readyMaxWaitMs}). Answers carry status words only; why a check failed goes to the log.
 * {@code /metrics} is mounted on the management listener, not on the public one. Optional components
 * (the broker tier, the Redis reminder trigger) are reported next to the database where configured,
 * and readiness does not depend on them: their fallbacks cover while they are down.
 */
public final class HealthRoutes {

  private static final Logger log = LoggerFactory.getLogger(HealthRoutes.class);

  private final Pool pool;
  private final PrometheusMeterRegistry registry;
  private final LongSupplier callbackWaitMs;
  private final long readyMaxWaitMs;
  private final Supplier<JsonObject> optionalComponents;

  public HealthRoutes(Pool pool, PrometheusMeterRegistry registry, LongSupplier callbackWaitMs, long readyMaxWaitMs) {
    this(pool, registry, callbackWaitMs, readyMaxWaitMs, JsonObject::new);
  }

  /** {@code optionalComponents}: name -> "UP"/"DOWN" of the configured optional parts (not part of readiness). */
  public HealthRoutes(Pool pool, PrometheusMeterRegistry registry, LongSupplier callbackWaitMs, long readyMaxWaitMs,
                      Supplier<JsonObject> optionalComponents) {
    this.pool = pool;
    this.registry = registry;
    this.callbackWaitMs = callbackWaitMs;
    this.readyMaxWaitMs = readyMaxWaitMs;
    this.optionalComponents = optionalComponents;
  }

  public void mount(Vertx vertx, Router root) {
    root.get("/health/live").handler(ctx -> Json.send(ctx, 200, new JsonObject().put("status", "UP")));
    root.get("/health/ready").handler(ctx -> {
      long waitMs = callbackWaitMs.getAsLong();
      boolean callbacksUp = waitMs <= readyMaxWaitMs;
      if (!callbacksUp) {
        log.warn("not ready: a callback has waited {} ms for a transaction slot (callbacks.readyMaxWaitMs {})",
            waitMs, readyMaxWaitMs);
      }
      pool.query("SELECT 1").execute()
          .timeout(2, TimeUnit.SECONDS)
          .onComplete(ar -> {
            if (ar.failed()) {
              log.warn("not ready: database check failed: {}", ar.cause().toString());
            }
            boolean up = ar.succeeded() && callbacksUp;
            Json.send(ctx, up ? 200 : 503, new JsonObject().put("status", up ? "UP" : "DOWN")
                .put("database", ar.succeeded() ? "UP" : "DOWN")
                .put("callbacks", callbacksUp ? "UP" : "STALLED")
                .mergeIn(optionalComponents.get()));
          });
    });
  }

  /** {@code GET /metrics} (Prometheus text format), for the management router. */
  public void mountMetrics(Router management) {
    management.get("/metrics").handler(ctx -> ctx.response()
        .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        .end(registry.scrape()));
  }
}
