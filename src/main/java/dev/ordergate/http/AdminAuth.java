package dev.ordergate.http;

import dev.ordergate.auth.Operator;
import dev.ordergate.auth.Sessions;
import dev.ordergate.domain.Rejection;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/**
 * Who may call {@code /admin/*}: the bearer admin token (automation), or an operator's console
 * session cookie. A session request that changes state must also carry the session's CSRF token in
 * {@code X-CSRF-Token} and must not come from another site (Fetch Metadata / Origin). The caller is
 * left in the routing context as an {@link Operator}: actions record that name, never one from the
 * request body (only the shared token, which names nobody, may say whom it acts for).
 */
public final class AdminAuth {

  public static final String CSRF_HEADER = "X-CSRF-Token";
  /** Sent by the console's background polling: such a request does not restart the idle clock. */
  public static final String BACKGROUND_HEADER = "X-Background";
  static final String COOKIE = "og_session";
  static final String SESSION_KEY = "ordergate.session";
  static final String SECURE_COOKIE = "__Host-og_session";
  private static final Set<HttpMethod> SAFE = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS);
  private static final Set<String> LOOPBACK = Set.of("localhost", "127.0.0.1", "::1", "[::1]");

  private final byte[] token;
  private final Sessions sessions;
  private final AuthThrottle throttle;

  public AdminAuth(String adminToken, Sessions sessions, AuthThrottle throttle) {
    this.token = ("Bearer " + adminToken).getBytes(StandardCharsets.UTF_8);
    this.sessions = sessions;
    this.throttle = throttle;
  }

  /** Failed authentications per client address (wrong or missing token, wrong password). */
  public AuthThrottle throttle() {
    return throttle;
  }

  public Sessions sessions() {
    return sessions;
  }

  /** The authorize step of every admin route; a second call on the same request passes through. */
  public void authorize(RoutingContext ctx) {
    if (ctx.get(Operator.KEY) != null) {
      ctx.next();
      return;
    }
    String clientKey = AuthThrottle.clientKey(client(ctx));
    refuseIfThrottled(ctx, clientKey);
    String header = ctx.request().getHeader("Authorization");
    if (header != null) {
      if (!MessageDigest.isEqual(token, header.getBytes(StandardCharsets.UTF_8))) {
        throttle.failure(clientKey);
        throw new Rejection(401, "UNAUTHORIZED", "admin endpoints need Authorization: Bearer <admin.token>");
      }
      throttle.success(clientKey);
      ctx.put(Operator.KEY, new Operator("token", Operator.Via.TOKEN, client(ctx)));
      ctx.next();
      return;
    }
    String sessionToken = sessionToken(ctx);
    if (sessionToken == null) {
      throttle.failure(clientKey);
      throw new Rejection(401, "UNAUTHORIZED",
          "admin endpoints need a console session (sign in at /console/) or Authorization: Bearer <admin.token>");
    }
    boolean unsafe = !SAFE.contains(ctx.request().method());
    if (unsafe) {
      requireSameSite(ctx.request());
    }
    boolean activity = ctx.request().getHeader(BACKGROUND_HEADER) == null;
    sessions.find(sessionToken, activity).onSuccess(session -> {
      if (session == null) {
        clearCookie(ctx);
        ctx.fail(new Rejection(401, "SESSION_EXPIRED", "the console session has ended; sign in again"));
        return;
      }
      if (unsafe && !constantTimeEquals(session.csrfToken(), ctx.request().getHeader(CSRF_HEADER))) {
        ctx.fail(new Rejection(403, "CSRF_REJECTED", "a state-changing request needs the session's " + CSRF_HEADER));
        return;
      }
      ctx.put(Operator.KEY, new Operator(session.operator(), Operator.Via.SESSION, client(ctx)));
      ctx.put(SESSION_KEY, session);
      ctx.next();
    }).onFailure(ctx::fail);
  }

  /**
   * A client that failed too often is refused (429, even with the right credentials) before they are
   * looked at. An ended session is not counted as a failure: it is what every operator meets.
   */
  void refuseIfThrottled(RoutingContext ctx, String clientKey) {
    long wait = throttle.blockedForSeconds(clientKey);
    if (wait > 0) {
      ctx.response().putHeader("Retry-After", Long.toString(wait));
      throw new Rejection(429, "TOO_MANY_FAILED_LOGINS",
          "too many failed admin authentications from this client; retry in " + wait + " s");
    }
  }

  /** The caller the authorize step established. */
  public static Operator caller(RoutingContext ctx) {
    Operator op = ctx.get(Operator.KEY);
    if (op == null) {
      throw new IllegalStateException("route is not behind AdminAuth.authorize");
    }
    return op;
  }

  /**
   * The caller as the actor an action records: the session's operator (a body {@code operator} is
   * refused, so a client cannot think it chose the name), or for the token the body's
   * {@code operator} (required when {@code required}), else "admin".
   */
  public static Operator actor(RoutingContext ctx, JsonObject body, boolean required) {
    Operator op = caller(ctx);
    if (op.via() == Operator.Via.SESSION) {
      if (body != null && body.containsKey("operator")) {
        throw Rejection.badRequest("operator comes from the console session; leave it out of the body");
      }
      return op;
    }
    String named = body == null ? null : Json.string(body, "operator", 64, required);
    return new Operator(named == null ? "admin" : named, Operator.Via.TOKEN, op.client());
  }

  /** Refuses a request another site made the browser send (Fetch Metadata, else Origin). */
  static void requireSameSite(HttpServerRequest req) {
    String site = req.getHeader("Sec-Fetch-Site");
    if (site != null && !site.equals("same-origin") && !site.equals("none")) {
      throw new Rejection(403, "CSRF_REJECTED", "cross-site request refused (Sec-Fetch-Site: " + site + ")");
    }
    String origin = req.getHeader("Origin");
    if (origin != null && req.authority() != null) {
      String expected = (req.isSSL() ? "https://" : "http://") + req.authority();
      String forwarded = "https://" + req.authority();
      if (!origin.equals(expected) && !origin.equals(forwarded)) {
        throw new Rejection(403, "CSRF_REJECTED", "cross-origin request refused (Origin: " + origin + ")");
      }
    }
  }

  /** The peer's address, for the audit log (not X-Forwarded-For: any client can write that). */
  static String client(RoutingContext ctx) {
    var peer = ctx.request().remoteAddress();
    return peer == null ? null : peer.hostAddress();
  }

  static String sessionToken(RoutingContext ctx) {
    Cookie c = ctx.request().getCookie(SECURE_COOKIE);
    if (c == null) {
      c = ctx.request().getCookie(COOKIE);
    }
    String v = c == null ? null : c.getValue();
    return v == null || v.isEmpty() || v.length() > 100 ? null : v;
  }

  /** HttpOnly, SameSite=Strict, Path=/; Secure (and the __Host- name) unless served to localhost. */
  static void setCookie(RoutingContext ctx, String value) {
    boolean secure = secure(ctx.request());
    ctx.response().addCookie(Cookie.cookie(secure ? SECURE_COOKIE : COOKIE, value).setPath("/")
        .setHttpOnly(true).setSecure(secure).setSameSite(CookieSameSite.STRICT));
  }

  static void clearCookie(RoutingContext ctx) {
    boolean secure = secure(ctx.request());
    ctx.response().addCookie(Cookie.cookie(secure ? SECURE_COOKIE : COOKIE, "").setPath("/").setMaxAge(0)
        .setHttpOnly(true).setSecure(secure).setSameSite(CookieSameSite.STRICT));
  }

  static boolean secure(HttpServerRequest req) {
    if (req.isSSL()) {
      return true;
    }
    String host = req.authority() == null ? null : req.authority().host();
    return host == null || !LOOPBACK.contains(host);
  }

  private static boolean constantTimeEquals(String expected, String given) {
    return given != null && MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
        given.getBytes(StandardCharsets.UTF_8));
  }
}
