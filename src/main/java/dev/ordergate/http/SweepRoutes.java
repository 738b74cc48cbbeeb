package dev.ordergate.http;

import dev.ordergate.sweep.SweepRun;
import dev.ordergate.sweep.Sweeper;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code /admin/sweeps}: the run log ({@code GET ?limit=N}, newest first, every instance) and a
 * manual run ({@code POST /run}) answered with its row once it finished. A run that failed halfway
 * still answers 200 with its row: {@code error} says what happened and that the rest is left to
 * the next run. Behind the admin token.
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
    r.post("/sweeps/run").handler(this::run);
    return r;
  }

  private void list(RoutingContext ctx) {
    int limit = AdminRoutes.limit(ctx, 20, 1000);
    sweeper.recentRuns(limit)
        .onSuccess(runs -> {
          JsonArray out = new JsonArray();
          runs.forEach(run -> out.add(run.toJson()));
          Json.send(ctx, 200, out);
        })
        .onFailure(ctx::fail);
  }

  private void run(RoutingContext ctx) {
    sweeper.runNow().map(SweepRun::toJson)
        .onSuccess(row -> Json.send(ctx, 200, row))
        .onFailure(ctx::fail);
  }
}
