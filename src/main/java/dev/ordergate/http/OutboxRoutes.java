package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import dev.ordergate.outbox.OutboxService;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.Arrays;
import java.util.UUID;

/** {@code /admin/outbox}: list events by status (DEAD by default), retry a dead one. */
public final class OutboxRoutes {

  private final OutboxService outbox;

  public OutboxRoutes(OutboxService outbox) {
    this.outbox = outbox;
  }

  /** {@code authorize} is {@link AdminRoutes#authorize}: every route sits behind it. */
  public Router router(Vertx vertx, Handler<RoutingContext> authorize) {
    Router r = Router.router(vertx);
    r.route("/outbox*").handler(authorize);
    r.get("/outbox").handler(this::list);
    r.post("/outbox/:id/retry").handler(this::retry);
    return r;
  }

  private void list(RoutingContext ctx) {
    String raw = Json.query(ctx, "status");
    OutboxService.Status status;
    try {
      status = raw == null ? OutboxService.Status.DEAD : OutboxService.Status.valueOf(raw);
    } catch (IllegalArgumentException e) {
      throw Rejection.badRequest("status must be one of " + Arrays.toString(OutboxService.Status.values()));
    }
    outbox.list(status, AdminRoutes.limit(ctx, 100, 1000))
        .onSuccess(list -> Json.send(ctx, 200, list)).onFailure(ctx::fail);
  }

  private void retry(RoutingContext ctx) {
    UUID id = uuid(ctx.pathParam("id"));
    JsonObject body = Json.optionalBody(ctx);
    String operator = Json.string(body, "operator", 64, false);
    outbox.retry(id, operator == null ? "admin" : operator)
        .onSuccess(event -> Json.send(ctx, 200, event)).onFailure(ctx::fail);
  }

  static UUID uuid(String raw) {
    try {
      if (raw != null && raw.length() == 36) {
        return UUID.fromString(raw);
      }
    } catch (IllegalArgumentException e) {
      // answered below
    }
    throw Rejection.badRequest("id must be an event id (a UUID)");
  }
}
