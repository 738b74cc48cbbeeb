package dev.ordergate.http;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.sqlclient.Pool;

import java.util.function.Supplier;

/**
 * Liveness, readiness (the database answers) and Prometheus metrics. Optional components (the
 * broker tier, the Redis reminder trigger) are reported next to the database where configured,
 * and readiness does not depend on them: their fallbacks cover while they are down.
 */
public final class HealthRoutes {

  private final Pool pool;
  private final PrometheusMeterRegistry registry;
  private final Supplier<JsonObject> optionalComponents;

  public HealthRoutes(Pool pool, PrometheusMeterRegistry registry) {
    this(pool, registry, JsonObject::new);
  }

  /** {@code optionalComponents}: name -> "UP"/"DOWN" of the configured optional parts. */
  public HealthRoutes(Pool pool, PrometheusMeterRegistry registry, Supplier<JsonObject> optionalComponents) {
    this.pool = pool;
    this.registry = registry;
    this.optionalComponents = optionalComponents;
  }

  public void mount(Vertx vertx, Router root) {
    root.get("/health/live").handler(ctx -> Json.send(ctx, 200, new JsonObject().put("status", "UP")));
    root.get("/health/ready").handler(ctx -> pool.query("SELECT 1").execute()
        .timeout(2, java.util.concurrent.TimeUnit.SECONDS)
        .onSuccess(v -> Json.send(ctx, 200, new JsonObject().put("status", "UP").put("database", "UP")
            .mergeIn(optionalComponents.get())))
        .onFailure(err -> Json.send(ctx, 503, new JsonObject().put("status", "DOWN").put("database", "DOWN")
            .mergeIn(optionalComponents.get()).put("message", String.valueOf(err.getMessage())))));
    root.get("/metrics").handler(ctx -> ctx.response()
        .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        .end(registry.scrape()));
  }
}
