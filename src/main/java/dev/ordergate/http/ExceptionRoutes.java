package dev.ordergate.http;

import dev.ordergate.auth.AuditLog;
import dev.ordergate.auth.Operator;
import dev.ordergate.domain.ExceptionKind;
import dev.ordergate.domain.Rejection;
import dev.ordergate.exceptions.ExceptionService;
import dev.ordergate.exceptions.ExceptionStatus;
import dev.ordergate.exceptions.Resolution;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.Arrays;

/**
 * {@code GET /admin/exceptions} (filters status, kind, channel, from, to, orderNo; keyset pages,
 * see {@link Page}), {@code /admin/exceptions/{id}} (with history) and
 * {@code POST /admin/exceptions/{id}/resolve} (audited; a console session must give a note).
 */
public final class ExceptionRoutes {

  private static final java.util.List<String> STATUSES =
      Arrays.stream(ExceptionStatus.values()).map(Enum::name).toList();
  private static final java.util.List<String> KINDS = Arrays.stream(ExceptionKind.values()).map(Enum::name).toList();

  private final ExceptionService exceptions;
  private final AuditLog audit;

  public ExceptionRoutes(ExceptionService exceptions, AuditLog audit) {
    this.exceptions = exceptions;
    this.audit = audit;
  }

  /** {@code authorize} is {@link AdminAuth#authorize}: every route sits behind it. */
  public Router router(Vertx vertx, Handler<RoutingContext> authorize) {
    Router r = Router.router(vertx);
    r.route("/exceptions*").handler(authorize);
    r.get("/exceptions").handler(this::list);
    r.get("/exceptions/:id").handler(ctx -> exceptions.get(id(ctx))
        .onSuccess(ex -> Json.send(ctx, 200, ex)).onFailure(ctx::fail));
    r.post("/exceptions/:id/resolve").handler(this::resolve);
    return r;
  }

  private void list(RoutingContext ctx) {
    String status = Page.oneOf(ctx, "status", STATUSES);
    String kind = Page.oneOf(ctx, "kind", KINDS);
    String channel = ctx.queryParams().get("channel");
    if (channel != null && !channel.matches("[A-Za-z0-9_-]{1,32}")) {
      throw Rejection.badRequest("channel must be a channel name");
    }
    String orderNo = ctx.queryParams().get("orderNo");
    if (orderNo != null && !orderNo.matches("[A-Za-z0-9._:-]{1,64}")) {
      throw Rejection.badRequest("orderNo is not a valid identifier");
    }
    int limit = AdminRoutes.limit(ctx, 100, 1000);
    ExceptionService.Filter filter = new ExceptionService.Filter(
        status == null ? null : ExceptionStatus.valueOf(status), kind == null ? null : ExceptionKind.valueOf(kind),
        channel, Page.time(ctx, "from"), Page.time(ctx, "to"), orderNo);
    exceptions.list(filter, Page.afterId(ctx, "exceptions"), limit + 1)
        .onSuccess(rows -> Page.send(ctx, "exceptions", rows, limit, row -> row.getLong("id")))
        .onFailure(ctx::fail);
  }

  private void resolve(RoutingContext ctx) {
    long id = id(ctx);
    JsonObject body = Json.body(ctx);
    Operator operator = AdminAuth.actor(ctx, body, true);
    String rawResolution = Json.string(body, "resolution", 32, true);
    Resolution resolution;
    try {
      resolution = Resolution.valueOf(rawResolution);
    } catch (IllegalArgumentException e) {
      throw Rejection.badRequest("resolution must be one of " + Arrays.toString(Resolution.values()));
    }
    String note = Json.string(body, "note", 2000, operator.via() == Operator.Via.SESSION);
    audit.record(operator, "RESOLVE_EXCEPTION", "exception " + id, resolution + (note == null ? "" : ": " + note),
            () -> exceptions.resolve(id, resolution, operator.name(), note), null)
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
