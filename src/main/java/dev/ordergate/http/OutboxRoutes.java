package dev.ordergate.http;

import dev.ordergate.auth.AuditLog;
import dev.ordergate.auth.Operator;
import dev.ordergate.domain.Rejection;
import dev.ordergate.outbox.OutboxService;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.Arrays;
import java.util.UUID;

/** {@code /admin/outbox}: list events by status (DEAD by default; keyset pages, see {@link Page}), retry a dead one (audited). */
public final class OutboxRoutes {

  private final OutboxService outbox;
  private final AuditLog audit;

  public OutboxRoutes(OutboxService outbox, AuditLog audit) {
    this.outbox = outbox;
    this.audit = audit;
  }

  /** {@code authorize} is {@link AdminAuth#authorize}: every route sits behind it. */
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
    int limit = AdminRoutes.limit(ctx, 100, 1000);
    outbox.list(status, Page.afterId(ctx, "outbox-" + status), limit + 1)
        .onSuccess(rows -> Page.send(ctx, "outbox-" + status, rows, limit, row -> row.getLong("seq")))
        .onFailure(ctx::fail);
  }

  private void retry(RoutingContext ctx) {
    UUID id = uuid(ctx.pathParam("id"));
    JsonObject body = Json.optionalBody(ctx);
    Operator operator = AdminAuth.actor(ctx, body, false);
    audit.record(operator, "RETRY_OUTBOX_EVENT", "event " + id, null, () -> outbox.retry(id, operator.name()), null)
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
