package dev.ordergate.http;

import dev.ordergate.auth.AuditLog;
import dev.ordergate.auth.Operator;
import dev.ordergate.auth.OperatorAccount;
import dev.ordergate.auth.LoginThrottle;
import dev.ordergate.auth.PasswordHash;
import dev.ordergate.auth.Sessions;
import dev.ordergate.config.ConsoleConfig;
import dev.ordergate.domain.Rejection;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.Arrays;

/**
 * {@code POST /admin/login} (name + password for a session cookie), {@code POST /admin/logout} and
 * {@code GET /admin/session} (who is signed in, and the CSRF token the console sends back on every
 * change). A failed login answers after {@code admin.login.failureDelayMs}; repeated failures are
 * throttled per name ({@link LoginThrottle}) and, with the bearer token's failures, per client
 * address ({@link AuthThrottle}: a success does not clear the address's count here); at most {@link #MAX_CHECKS} password hashes are
 * checked at once (a flood of guesses with made-up names gets 503, not every worker thread).
 * Every attempt goes to the audit log.
 */
public final class SessionRoutes {

  /** Checked for unknown names too, so the answer takes as long whether or not the account exists. */
  private static final PasswordHash DUMMY = PasswordHash.parse(
      PasswordHash.create("not-an-account".toCharArray(), PasswordHash.DEFAULT_ITERATIONS));

  /** Password checks running at once, at most: each costs a worker thread for its whole hash. */
  static final int MAX_CHECKS = 4;

  private final java.util.concurrent.atomic.AtomicInteger checking = new java.util.concurrent.atomic.AtomicInteger();
  private final AdminAuth auth;
  private final LoginThrottle throttle;
  private final AuditLog audit;
  private final ConsoleConfig config;

  public SessionRoutes(AdminAuth auth, LoginThrottle throttle, AuditLog audit) {
    this.auth = auth;
    this.throttle = throttle;
    this.audit = audit;
    this.config = auth.sessions().config();
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.post("/login").handler(ctx -> login(vertx, ctx));
    r.post("/logout").handler(auth::authorize).handler(this::logout);
    r.get("/session").handler(auth::authorize).handler(this::session);
    return r;
  }

  private void login(Vertx vertx, RoutingContext ctx) {
    AdminAuth.requireSameSite(ctx.request());
    String clientKey = AuthThrottle.clientKey(AdminAuth.client(ctx));
    auth.refuseIfThrottled(ctx, clientKey);
    String type = ctx.request().getHeader("Content-Type");
    // A cross-site form can only send form or text/plain bodies: anything but JSON is refused.
    if (type != null && !type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
      throw new Rejection(415, "UNSUPPORTED_MEDIA_TYPE", "login takes a JSON body (Content-Type: application/json)");
    }
    JsonObject body = Json.body(ctx);
    String name = Json.string(body, "name", 64, true);
    String password = Json.string(body, "password", 200, true);
    OperatorAccount account = config.operators().get(name);
    String previous = AdminAuth.sessionToken(ctx);
    throttle.reserve(name).compose(wait -> {
      if (wait > 0) {
        ctx.response().putHeader("Retry-After", String.valueOf(wait));
        return audit.entry(name, "LOGIN", "LOGIN", null, "THROTTLED", "retry after " + wait + " s", AdminAuth.client(ctx))
            .compose(v -> Future.<JsonObject>failedFuture(new Rejection(429, "TOO_MANY_ATTEMPTS",
                "too many failed sign-ins for this name; retry after " + wait + " s")));
      }
      if (checking.incrementAndGet() > MAX_CHECKS) {
        checking.decrementAndGet();
        ctx.response().putHeader("Retry-After", "1");
        return Future.<JsonObject>failedFuture(new Rejection(503, "LOGIN_BUSY", "too many sign-ins at once; retry in a second"));
      }
      return vertx.executeBlocking(() -> {
            char[] chars = password.toCharArray();
            try {
              return (account == null ? DUMMY : account.hash()).matches(chars) && account != null;
            } finally {
              Arrays.fill(chars, '\0');
            }
          }, false)
          .onComplete(ar -> checking.decrementAndGet())
          .compose(ok -> {
            if (ok) {
              return signIn(ctx, account, previous);
            }
            auth.throttle().failure(clientKey);
            return refuse(vertx, name, AdminAuth.client(ctx));
          });
    }).onSuccess(answer -> Json.send(ctx, 200, answer)).onFailure(ctx::fail);
  }

  private Future<JsonObject> signIn(RoutingContext ctx, OperatorAccount account, String previous) {
    return (previous == null ? Future.<Void>succeededFuture() : auth.sessions().end(previous))
        .compose(v -> throttle.succeeded(account.name()))
        .compose(v -> auth.sessions().create(account))
        .compose(created -> audit.entry(account.name(), "LOGIN", "LOGIN", null, "OK", null, AdminAuth.client(ctx)).map(v -> {
          AdminAuth.setCookie(ctx, created.token());
          return sessionJson(created.session());
        }));
  }

  private Future<JsonObject> refuse(Vertx vertx, String name, String client) {
    Promise<Void> delay = Promise.promise();
    vertx.setTimer(Math.max(1, config.failureDelayMs()), id -> delay.complete());
    return audit.entry(name, "LOGIN", "LOGIN", null, "INVALID_CREDENTIALS", null, client)
        .compose(v -> delay.future())
        .compose(v -> Future.failedFuture(new Rejection(401, "INVALID_CREDENTIALS", "wrong name or password")));
  }

  private void logout(RoutingContext ctx) {
    Operator op = AdminAuth.caller(ctx);
    String token = AdminAuth.sessionToken(ctx);
    if (op.via() != Operator.Via.SESSION || token == null) {
      throw new Rejection(400, "NO_SESSION", "logout ends a console session; this request has none");
    }
    audit.record(op, "LOGOUT", null, null, () -> auth.sessions().end(token), null)
        .onSuccess(v -> {
          AdminAuth.clearCookie(ctx);
          Json.send(ctx, 200, new JsonObject().put("signedOut", op.name()));
        })
        .onFailure(ctx::fail);
  }

  private void session(RoutingContext ctx) {
    Operator op = AdminAuth.caller(ctx);
    Sessions.Session session = ctx.get(AdminAuth.SESSION_KEY);
    Json.send(ctx, 200, session == null
        ? new JsonObject().put("operator", op.name()).put("via", op.via().name())
        : sessionJson(session));
  }

  private JsonObject sessionJson(Sessions.Session s) {
    return new JsonObject().put("operator", s.operator()).put("via", Operator.Via.SESSION.name())
        .put("csrfToken", s.csrfToken()).put("expiresAt", s.expiresAt().toString())
        .put("idleTimeoutSeconds", config.idleTimeoutSeconds());
  }
}
