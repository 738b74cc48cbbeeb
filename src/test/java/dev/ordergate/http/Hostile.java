package dev.ordergate.http;

import dev.ordergate.channel.ordergate.OrdergateSignature;
import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the bad-input walk and the fuzzer share: fixtures that give every route something to
 * change, the catalog of every route with its string fields, the hostile values, a raw HTTP client
 * (URIs and bodies go out byte for byte) and a dump of every table to compare before and after.
 */
final class Hostile {

  /** A hostile value as it appears in a JSON body (raw bytes, possibly not even valid JSON). */
  record Nasty(String name, byte[] json, boolean namesField) {
    static Nasty of(String name, String jsonLiteral, boolean namesField) {
      return new Nasty(name, jsonLiteral.getBytes(StandardCharsets.ISO_8859_1), namesField);
    }
  }

  /** JSON literals: escapes that decode to bad text (the answer names the field), then bad bytes. */
  static final List<Nasty> BODY_VALUES = List.of(
      Nasty.of("NUL", "\"\\u0000\"", true),
      Nasty.of("NUL inside", "\"ok\\u0000ok\"", true),
      Nasty.of("ESC sequence", "\"\\u001b[31mred\\u001b[0m\"", true),
      Nasty.of("newline (log forging)", "\"x\\n12:00:00.000 ERROR forged line\"", true),
      Nasty.of("carriage return", "\"x\\ry\"", true),
      Nasty.of("tab", "\"x\\ty\"", true),
      Nasty.of("DEL", "\"x\\u007f\"", true),
      Nasty.of("C1 NEL", "\"x\\u0085\"", true),
      Nasty.of("line separator", "\"x\\u2028y\"", true),
      Nasty.of("lone high surrogate", "\"x\\ud800\"", true),
      Nasty.of("lone low surrogate", "\"\\udc00x\"", true),
      Nasty.of("reversed surrogates", "\"\\udc00\\ud800\"", true),
      Nasty.of("5,000 characters", "\"" + "x".repeat(5000) + "\"", true),
      Nasty.of("raw NUL byte", "\"a\u0000b\"", false),
      Nasty.of("raw ESC byte", "\"a\u001bb\"", false),
      Nasty.of("invalid UTF-8", "\"a\u00c3\u0028b\"", false),
      Nasty.of("overlong NUL", "\"a\u00c0\u0080b\"", false),
      Nasty.of("UTF-8 encoded surrogate", "\"a\u00ed\u00a0\u0080b\"", false),
      Nasty.of("truncated UTF-8", "\"a\u00e2\u0082\"", false),
      Nasty.of("100 KB", "\"" + "x".repeat(100 * 1024) + "\"", false));

  /** Percent-encoded path segments and query values. */
  static final List<String> URI_VALUES = List.of(
      "%00", "A%00B", "%1B%5B31m", "A%0AINFO%20forged", "%0D", "%09", "%7F", "%C2%85", "%E2%80%A8",
      "%ED%A0%80", "%C3%28", "%C0%80", "%E2%82", "%ZZ", "A%", "%FF%FE", "x".repeat(5000));

  /** One route: where it is, its valid body (null: none) and the JSON paths of its strings. */
  record Route(HttpMethod method, String path, Map<String, String> pathParams, JsonObject body,
               List<String> stringFields, Map<String, String> query, boolean admin, boolean signed,
               boolean writes) {

    String uri(Map<String, String> params, Map<String, String> queryValues) {
      String p = path;
      for (var e : params.entrySet()) {
        p = p.replace(":" + e.getKey(), e.getValue());
      }
      if (!queryValues.isEmpty()) {
        StringBuilder q = new StringBuilder();
        queryValues.forEach((k, v) -> q.append(q.length() == 0 ? "?" : "&").append(k).append('=').append(v));
        p += q;
      }
      return p;
    }

    String uri() {
      return uri(pathParams, query);
    }

    /** Behind an API key ({@code api.keys}): the public routes but the callbacks. */
    boolean keyed() {
      return path.startsWith("/api/") && !signed;
    }

    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  record Fixture(long exceptionId, String deadEventId) {}

  /** Stock, a coupon, a pending and a paid order, an open exception and a dead outbox event. */
  static Fixture setUp(TestApp app) {
    app.truncate();
    app.setStock("A", 100);
    app.createCoupon("C1", "u1", 10);
    app.createOrder(TestApp.order("PEND1", "u1", null, "A", 1, 500));
    app.createOrder(TestApp.order("PAID1", "u1", null, "A", 1, 700));
    app.callback(TestApp.payment("T-PAID1", "PAID1", 700));
    // An unknown order above the auto-refund threshold: an OPEN exception for the operator.
    app.callback(TestApp.payment("T-UNKNOWN", "NOSUCHORDER", 50_000));
    long exceptionId = app.rows("SELECT id FROM exception_orders").get(0).getLong(0);
    String dead = app.rows("UPDATE outbox_events SET status = 'DEAD', last_error = 'fixture' "
        + "WHERE id = (SELECT id FROM outbox_events_shown ORDER BY seq LIMIT 1) RETURNING id::text").get(0).getString(0);
    return new Fixture(exceptionId, dead);
  }

  /** Every route of the main listener (health included), with a valid request for each. */
  static List<Route> routes(Fixture f) {
    List<Route> r = new ArrayList<>();
    JsonObject order = TestApp.order("NEW1", "u1", "C1", "A", 1, 100);
    r.add(route(HttpMethod.POST, "/api/orders", Map.of(), order,
        List.of("orderNo", "userId", "couponCode", "items[0].sku"), Map.of(), false, false, true));
    r.add(route(HttpMethod.GET, "/api/orders/:orderNo", Map.of("orderNo", "PEND1"), null, List.of(), Map.of(),
        false, false, false));
    r.add(route(HttpMethod.GET, "/api/orders/:orderNo/transitions", Map.of("orderNo", "PEND1"), null, List.of(),
        Map.of(), false, false, false));
    r.add(route(HttpMethod.POST, "/api/orders/:orderNo/cancel", Map.of("orderNo", "PEND1"),
        new JsonObject().put("userId", "u1").put("reason", "changed my mind"), List.of("userId", "reason"),
        Map.of(), false, false, true));
    r.add(route(HttpMethod.GET, "/api/orders/:orderNo/payments", Map.of("orderNo", "PEND1"), null, List.of(),
        Map.of(), false, false, false));
    // The test's only channel is of the ordergate kind, which opens nothing at a gateway: its valid request
    // is the route's own refusal (CHANNEL_CANNOT_OPEN), past the guard.
    r.add(route(HttpMethod.POST, "/api/orders/:orderNo/payments", Map.of("orderNo", "PEND1"),
        new JsonObject().put("channel", TestApp.CHANNEL), List.of("channel"), Map.of(), false, false, false));
    r.add(route(HttpMethod.GET, "/api/inventory/:sku", Map.of("sku", "A"), null, List.of(), Map.of(),
        false, false, false));
    r.add(route(HttpMethod.GET, "/api/coupons/:code", Map.of("code", "C1"), null, List.of(), Map.of(),
        false, false, false));
    r.add(route(HttpMethod.POST, "/api/callbacks/:channel", Map.of("channel", TestApp.CHANNEL),
        TestApp.payment("T-PEND1", "PEND1", 500), List.of("txnId", "orderNo", "status"), Map.of(),
        false, true, true));
    r.add(route(HttpMethod.PUT, "/admin/inventory/:sku", Map.of("sku", "A"),
        new JsonObject().put("available", 7).put("operator", "ops"), List.of("operator"), Map.of(),
        true, false, true));
    r.add(route(HttpMethod.POST, "/admin/coupons", Map.of(),
        new JsonObject().put("code", "C2").put("userId", "u2").put("discountCents", 5), List.of("code", "userId"),
        Map.of(), true, false, true));
    r.add(route(HttpMethod.POST, "/admin/orders/:orderNo/cancel", Map.of("orderNo", "PEND1"),
        new JsonObject().put("operator", "ops").put("reason", "fraud check"), List.of("operator", "reason"),
        Map.of(), true, false, true));
    r.add(route(HttpMethod.GET, "/admin/exceptions", Map.of(), null, List.of(),
        Map.of("status", "OPEN", "kind", "UNKNOWN_ORDER", "limit", "10"), true, false, false));
    r.add(route(HttpMethod.GET, "/admin/exceptions/:id", Map.of("id", Long.toString(f.exceptionId())), null,
        List.of(), Map.of(), true, false, false));
    r.add(route(HttpMethod.POST, "/admin/exceptions/:id/resolve", Map.of("id", Long.toString(f.exceptionId())),
        new JsonObject().put("operator", "ops").put("resolution", "DISMISSED").put("note", "customer called"),
        List.of("operator", "resolution", "note"), Map.of(), true, false, true));
    r.add(route(HttpMethod.GET, "/admin/outbox", Map.of(), null, List.of(), Map.of("status", "DEAD", "limit", "5"),
        true, false, false));
    r.add(route(HttpMethod.POST, "/admin/outbox/:id/retry", Map.of("id", f.deadEventId()),
        new JsonObject().put("operator", "ops"), List.of("operator"), Map.of(), true, false, true));
    r.add(route(HttpMethod.GET, "/admin/sweeps", Map.of(), null, List.of(), Map.of("limit", "5"), true, false, false));
    r.add(route(HttpMethod.POST, "/admin/sweeps/run", Map.of(), null, List.of(), Map.of(), true, false, true));
    r.add(route(HttpMethod.GET, "/admin/reconcile", Map.of(), null, List.of(), Map.of(), true, false, false));
    r.add(route(HttpMethod.GET, "/admin/reconcile/last", Map.of(), null, List.of(), Map.of(), true, false, false));
    r.add(route(HttpMethod.POST, "/admin/reconcile/run", Map.of(), null, List.of(), Map.of(), true, false, true));
    r.add(route(HttpMethod.GET, "/admin/reconcile/gateway", Map.of(), null, List.of(),
        Map.of("channel", TestApp.CHANNEL, "date", "2026-12-01"), true, false, false));
    // The operator console's API and pages.
    r.add(route(HttpMethod.GET, "/admin/summary", Map.of(), null, List.of(), Map.of(), true, false, false));
    r.add(route(HttpMethod.GET, "/admin/orders", Map.of(), null, List.of(), Map.of("txnId", "T-PAID1", "limit", "5"),
        true, false, false));
    r.add(route(HttpMethod.GET, "/admin/orders/:orderNo", Map.of("orderNo", "PAID1"), null, List.of(), Map.of(),
        true, false, false));
    r.add(route(HttpMethod.GET, "/admin/audit", Map.of(), null, List.of(), Map.of("limit", "5"), true, false, false));
    r.add(route(HttpMethod.GET, "/admin/sweeps/settings", Map.of(), null, List.of(), Map.of(), true, false, false));
    r.add(route(HttpMethod.GET, "/admin/session", Map.of(), null, List.of(), Map.of(), true, false, false));
    r.add(route(HttpMethod.POST, "/admin/logout", Map.of(), null, List.of(), Map.of(), true, false, true));
    r.add(route(HttpMethod.POST, "/admin/login", Map.of(),
        new JsonObject().put("name", "nobody").put("password", "not-a-password"), List.of("name", "password"),
        Map.of(), false, false, true));
    r.add(route(HttpMethod.GET, "/console", Map.of(), null, List.of(), Map.of(), false, false, false));
    r.add(route(HttpMethod.GET, "/health/live", Map.of(), null, List.of(), Map.of(), false, false, false));
    r.add(route(HttpMethod.GET, "/openapi.json", Map.of(), null, List.of(), Map.of(), false, false, false));
    r.add(route(HttpMethod.GET, "/health/ready", Map.of(), null, List.of(), Map.of(), false, false, false));
    return r;
  }

  private static Route route(HttpMethod method, String path, Map<String, String> params, JsonObject body,
                             List<String> fields, Map<String, String> query, boolean admin, boolean signed,
                             boolean writes) {
    return new Route(method, path, new LinkedHashMap<>(params), body, fields, new LinkedHashMap<>(query), admin,
        signed, writes);
  }

  /** The route's body with the string at {@code field} replaced by the raw {@code literal}. */
  static byte[] bodyWith(Route route, String field, byte[] literal) {
    String marker = "@@HOSTILE@@";
    JsonObject copy = route.body().copy();
    set(copy, field, marker);
    String text = copy.encode();
    int at = text.indexOf("\"" + marker + "\"");
    Buffer out = Buffer.buffer();
    out.appendString(text.substring(0, at)).appendBytes(literal)
        .appendString(text.substring(at + marker.length() + 2));
    return out.getBytes();
  }

  /** Sets a JSON path like {@code items[0].sku} (one level of list index supported). */
  static void set(JsonObject root, String path, Object value) {
    String[] parts = path.split("\\.");
    Object node = root;
    for (int i = 0; i < parts.length; i++) {
      String part = parts[i];
      boolean last = i == parts.length - 1;
      int bracket = part.indexOf('[');
      if (bracket >= 0) {
        JsonArray arr = ((JsonObject) node).getJsonArray(part.substring(0, bracket));
        int idx = Integer.parseInt(part.substring(bracket + 1, part.length() - 1));
        if (last) {
          arr.set(idx, value);
        } else {
          node = arr.getValue(idx);
        }
      } else if (last) {
        ((JsonObject) node).put(part, value);
      } else {
        node = ((JsonObject) node).getValue(part);
      }
    }
  }

  // ---- raw HTTP -------------------------------------------------------------------------------

  record Answer(int status, String body) {}

  static HttpClient client(TestApp app) {
    return app.vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1")
        .setDefaultPort(app.verticle.port()).setMaxInitialLineLength(16 * 1024), new PoolOptions().setHttp1MaxSize(32));
  }

  /**
   * One request on a connection of its own; a request that got no answer at all (the client
   * lost it as a connection closed) is sent once more, and only a second silence counts (-1).
   */
  static Future<Answer> send(HttpClient client, HttpMethod method, String uri, byte[] body,
                             Map<String, String> headers) {
    return sendOnce(client, method, uri, body, headers)
        .compose(a -> a.status() >= 0 ? Future.succeededFuture(a) : sendOnce(client, method, uri, body, headers));
  }

  private static Future<Answer> sendOnce(HttpClient client, HttpMethod method, String uri, byte[] body,
                                         Map<String, String> headers) {
    RequestOptions options = new RequestOptions().setMethod(method).setURI(uri).setIdleTimeout(5_000);
    headers.forEach(options::putHeader);
    // A connection per request: the server closes some (after a 413, 414 or 431) as it answers,
    // and a pooled connection picked in that instant would lose the next request.
    options.putHeader("Connection", "close");
    return client.request(options)
        .compose(req -> body == null ? req.send() : req.send(Buffer.buffer(body)))
        .compose(resp -> resp.body().map(b -> new Answer(resp.statusCode(), b.toString(StandardCharsets.UTF_8))))
        .timeout(10, java.util.concurrent.TimeUnit.SECONDS)
        .recover(err -> Future.succeededFuture(new Answer(-1, "no answer: " + err)));
  }

  /** Headers a legitimate caller of {@code route} would send for {@code body}. */
  static Map<String, String> headers(Route route, byte[] body) {
    Map<String, String> h = new LinkedHashMap<>();
    if (body != null) {
      h.put("Content-Type", "application/json");
    }
    if (route.admin()) {
      h.put("Authorization", "Bearer " + TestApp.ADMIN_TOKEN);
    } else if (route.keyed()) {
      h.put("Authorization", "Bearer " + TestApp.API_KEY);
    }
    if (route.signed()) {
      h.put(OrdergateSignature.HEADER, OrdergateSignature.header(TestApp.SECRET, System.currentTimeMillis() / 1000, TestApp.CHANNEL, body == null ? new byte[0] : body));
    }
    return h;
  }

  // ---- the database, whole --------------------------------------------------------------------

  /** Every row of every table of the service's schema, as text, in a stable order. */
  static String dump(TestApp app) {
    StringBuilder out = new StringBuilder();
    for (Row t : app.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
        + "AND table_type = 'BASE TABLE' ORDER BY table_name")) {
      String table = t.getString(0);
      out.append("## ").append(table).append('\n');
      for (Row row : app.rows("SELECT x::text FROM \"" + table + "\" x ORDER BY 1")) {
        out.append(row.getString(0)).append('\n');
      }
    }
    return out.toString();
  }
}
