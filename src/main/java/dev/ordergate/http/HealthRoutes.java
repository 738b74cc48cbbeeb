package dev.ordergate.http;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.sqlclient.Pool;

/** Liveness, readiness (the database answers) and Prometheus metrics. */
public final class HealthRoutes {

  private final Pool pool;
  private final PrometheusMeterRegistry registry;

  public HealthRoutes(Pool pool, PrometheusMeterRegistry registry) {
    this.pool = pool;
    this.registry = registry;
  }

  public void mount(Vertx vertx, Router root) {
    root.get("/health/live").handler(ctx -> Json.send(ctx, 200, new JsonObject().put("status", "UP")));
    root.get("/health/ready").handler(ctx -> pool.query("SELECT 1").execute()
        .timeout(2, java.util.concurrent.TimeUnit.SECONDS)
        .onSuccess(v -> Json.send(ctx, 200, new JsonObject().put("status", "UP").put("database", "UP")))
        .onFailure(err -> Json.send(ctx, 503, new JsonObject().put("status", "DOWN").put("database", "DOWN")
            .put("message", String.valueOf(err.getMessage())))));
    root.get("/metrics").handler(ctx -> ctx.response()
        .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        .end(registry.scrape()));
  }
}
