package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.ConnectException;
import java.util.UUID;

/**
 * The one failure handler: every failure becomes {@code {"error","message"}} with its status.
 * Client mistakes are 4xx with the cause; only our own failures are 5xx (a payment gateway
 * retries those), each logged once with an id the body repeats.
 */
public final class Failures {

  private static final Logger log = LoggerFactory.getLogger(Failures.class);

  private Failures() {
  }

  public static void handle(RoutingContext ctx) {
    if (ctx.response().ended()) {
      return;
    }
    Throwable failure = ctx.failure();
    if (failure instanceof Rejection r) {
      send(ctx, r.status(), r.code(), r.getMessage());
      return;
    }
    if (failure instanceof io.vertx.ext.web.handler.HttpException http && http.getStatusCode() < 500) {
      // vertx-web's own refusals (an undecodable query string, for one) are the client's mistake.
      send(ctx, http.getStatusCode(), http.getStatusCode() == 400 ? "BAD_REQUEST" : "ERROR",
          http.getStatusCode() == 400 ? "the request could not be read" : "request refused");
      return;
    }
    if (failure == null) {
      int status = ctx.statusCode();
      switch (status) {
        case 400 -> send(ctx, 400, "BAD_REQUEST", "the request could not be read");
        case 401 -> send(ctx, 401, "UNAUTHORIZED", "missing or wrong credentials");
        case 404 -> send(ctx, 404, "NOT_FOUND", "no such resource");
        case 405 -> send(ctx, 405, "METHOD_NOT_ALLOWED", "method not allowed here");
        case 413 -> send(ctx, 413, "PAYLOAD_TOO_LARGE", "request body is over the limit");
        default -> send(ctx, status > 0 ? status : 500, "ERROR", "request failed");
      }
      return;
    }
    Ours ours = ours(ctx, failure);
    send(ctx, ours.status(), ours.code(), ours.message());
  }

  /** Our own failure, as its status, code and message (logged once, with the id the message repeats). */
  public record Ours(int status, String code, String message) {}

  /**
   * Classifies and logs a failure on our side (a {@link Rejection} with a 5xx status keeps its own);
   * the payment-notification route answers it in the gateway's dialect.
   */
  public static Ours ours(RoutingContext ctx, Throwable failure) {
    if (failure instanceof Rejection r) {
      return new Ours(r.status(), r.code(), r.getMessage());
    }
    String errorId = UUID.randomUUID().toString();
    String busy = databaseBusy(failure);
    if (busy != null) {
      log.warn("database busy [{}] on {} {}: {}", errorId, ctx.request().method(), ctx.request().path(), busy);
      return new Ours(503, "DATABASE_BUSY", busy + "; retry later (error id " + errorId + ")");
    }
    if (isDatabaseUnavailable(failure)) {
      log.error("database unavailable [{}] on {} {}: {}", errorId, ctx.request().method(), ctx.request().path(),
          failure.toString());
      return new Ours(503, "DATABASE_UNAVAILABLE", "the database did not answer; retry later (error id " + errorId + ")");
    }
    log.error("internal error [{}] on {} {}", errorId, ctx.request().method(), ctx.request().path(), failure);
    return new Ours(500, "INTERNAL_ERROR", "internal error (error id " + errorId + ")");
  }

  /** Our own lock or statement timeout ({@code db.lockTimeoutMs}, {@code db.statementTimeoutMs}): the client retries. */
  static String databaseBusy(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof PgException pg && "55P03".equals(pg.getSqlState())) {
        return "a row it needs stayed locked past db.lockTimeoutMs";
      }
      if (c instanceof PgException pg && "57014".equals(pg.getSqlState())) {
        return "the statement ran past db.statementTimeoutMs";
      }
    }
    return null;
  }

  /**
   * The database could not be reached or dropped us: refused, reset or closed connections, an
   * administrator shutdown or crash ({@code 57P01}-{@code 57P03}), connection failures ({@code 08}),
   * too many connections ({@code 53300}), no pooled connection or answer in time. All of them are
   * 503: the request may be repeated once the database is back.
   */
  public static boolean isDatabaseUnavailable(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ConnectException || c instanceof ClosedConnectionException
          || c instanceof java.io.IOException || c instanceof java.util.concurrent.TimeoutException) {
        return true;
      }
      if (c instanceof PgException pg && pg.getSqlState() != null
          && (pg.getSqlState().startsWith("08") || pg.getSqlState().startsWith("57P")
          || "53300".equals(pg.getSqlState()))) {
        return true;
      }
      // The pool hands out a connection the server closed a moment ago: "Connection is not active now".
      if (c instanceof io.vertx.core.VertxException && c.getMessage() != null
          && c.getMessage().startsWith("Connection is not active")) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return false;
  }

  static void send(RoutingContext ctx, int status, String code, String message) {
    if (status == 503) {
      ctx.response().putHeader("Retry-After", "1");
    }
    Json.send(ctx, status, new JsonObject().put("error", code).put("message", message));
  }
}
