package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import dev.ordergate.exceptions.ExceptionService;
import dev.ordergate.exceptions.Resolution;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.Arrays;

/**
 * {@code /admin/exceptions/{id}} (with history) and {@code POST /admin/exceptions/{id}/resolve}.
 * The list, {@code GET /admin/exceptions}, stays in {@link AdminRoutes}.
 */
public final class ExceptionRoutes {

  private final ExceptionService exceptions;

  public ExceptionRoutes(ExceptionService exceptions) {
    this.exceptions = exceptions;
  }

  /** {@code authorize} is {@link AdminRoutes#authorize}: every route sits behind it. */
  public Router router(Vertx vertx, Handler<RoutingContext> authorize) {
    Router r = Router.router(vertx);
    r.route("/exceptions/*").handler(authorize);
    r.get("/exceptions/:id").handler(ctx -> exceptions.get(id(ctx))
        .onSuccess(ex -> Json.send(ctx, 200, ex)).onFailure(ctx::fail));
    r.post("/exceptions/:id/resolve").handler(this::resolve);
    return r;
  }

  private void resolve(RoutingContext ctx) {
    long id = id(ctx);
    JsonObject body = Json.body(ctx);
    String operator = Json.string(body, "operator", 64, true);
    String rawResolution = Json.string(body, "resolution", 32, true);
    Resolution resolution;
    try {
      resolution = Resolution.valueOf(rawResolution);
    } catch (IllegalArgumentException e) {
      throw Rejection.badRequest("resolution must be one of " + Arrays.toString(Resolution.values()));
    }
    String note = Json.string(body, "note", 2000, false);
    exceptions.resolve(id, resolution, operator, note)
        .onSuccess(ex -> Json.send(ctx, 200, ex)).onFailure(ctx::fail);
  }

  private static long id(RoutingContext ctx) {
    String raw = ctx.pathParam("id");
    if (raw == null || !raw.matches("[1-9][0-9]{0,17}")) {
      throw Rejection.badRequest("id must be an exception id (a positive whole number)");
    }
    return Long.parseLong(raw);
  }
}
