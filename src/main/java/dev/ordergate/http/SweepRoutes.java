package dev.ordergate.http;

import dev.ordergate.config.SweepConfig;
import dev.ordergate.sweep.SweepRun;
import dev.ordergate.sweep.Sweeper;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code /admin/sweeps}: the run log ({@code GET ?limit=N}, newest first, every instance, keyset
 * pages, see {@link Page}), a manual run ({@code POST /run}, audited) answered with its row once it
 * finished, and the settings in force on this instance ({@code GET /settings}). A run that failed
 * halfway still answers 200 with its row: {@code error} says what happened and that the rest is
 * left to the next run. Behind {@link AdminAuth}.
 */
public final class SweepRoutes {

  private final AdminRoutes admin;
  private final Sweeper sweeper;

  public SweepRoutes(AdminRoutes admin, Sweeper sweeper) {
    this.admin = admin;
    this.sweeper = sweeper;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.route("/sweeps*").handler(admin::authorize);
    r.get("/sweeps").handler(this::list);
    r.get("/sweeps/settings").handler(ctx -> Json.send(ctx, 200, settings(sweeper)));
    r.post("/sweeps/run").handler(this::run);
    return r;
  }

  private void list(RoutingContext ctx) {
    int limit = AdminRoutes.limit(ctx, 20, 1000);
    sweeper.recentRuns(Page.afterId(ctx, "sweeps"), limit + 1)
        .onSuccess(runs -> {
          JsonArray out = new JsonArray();
          runs.forEach(run -> out.add(run.toJson()));
          Page.send(ctx, "sweeps", out, limit, row -> row.getLong("id"));
        })
        .onFailure(ctx::fail);
  }

  private void run(RoutingContext ctx) {
    admin.audit().record(AdminAuth.actor(ctx, null, false), "RUN_SWEEP", "instance " + sweeper.instanceId(), null,
            sweeper::runNow, run -> run.failed() ? "FAILED" : "OK")
        .map(SweepRun::toJson)
        .onSuccess(row -> Json.send(ctx, 200, row))
        .onFailure(ctx::fail);
  }

  static JsonObject settings(Sweeper sweeper) {
    SweepConfig c = sweeper.config();
    return new JsonObject().put("instanceId", sweeper.instanceId())
        .put("enabled", c.enabled()).put("periodMs", c.periodMs()).put("batchSize", c.batchSize())
        .put("maxBatchesPerRun", c.maxBatchesPerRun()).put("batchesInFlight", c.batchesInFlight())
        .put("graceSeconds", c.graceSeconds())
        .put("precise", c.precise()).put("minDelayMs", c.minDelayMs())
        .put("runLogRetentionDays", c.runLogRetentionDays()).put("configScanMs", c.configScanMs());
  }
}
