package dev.ordergate.http;

import dev.ordergate.channel.ordergate.OrdergateSignature;
import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Seeded hostile requests against every route ({@link Hostile#routes}): each one invalid or forged
 * by construction (a hostile string in any field, path or query; wrong types; broken, nested,
 * oversized or mistyped bodies; forged, stale or missing signatures; wrong admin tokens; hostile
 * paths and methods; oversized headers and URIs). None may be answered 2xx or 5xx (or not at all),
 * and the database must be byte-identical afterwards.
 */
final class Fuzzer {

  /** What came back: per-status counts, and each wrong answer (up to a sample). */
  record Result(int requests, Map<Integer, Integer> statuses, List<String> wrong, boolean databaseUnchanged) {
    int serverErrors() {
      return statuses.entrySet().stream().filter(e -> e.getKey() >= 500).mapToInt(Map.Entry::getValue).sum();
    }

    int successes() {
      return statuses.entrySet().stream().filter(e -> e.getKey() >= 200 && e.getKey() < 300)
          .mapToInt(Map.Entry::getValue).sum();
    }

    boolean clean() {
      return wrong.isEmpty() && databaseUnchanged;
    }

    @Override
    public String toString() {
      return requests + " requests, statuses " + statuses + ", 5xx " + serverErrors() + ", 2xx " + successes()
          + ", database " + (databaseUnchanged ? "unchanged" : "CHANGED")
          + (wrong.isEmpty() ? "" : ", wrong answers (sample):\n  " + String.join("\n  ", wrong.subList(0, Math.min(20, wrong.size()))));
    }
  }

  private record Request(String kind, HttpMethod method, String uri, byte[] body, Map<String, String> headers) {}

  private static final List<String> HOSTILE_PATHS = List.of(
      "/../../etc/passwd", "/api/../admin/reconcile", "/api/orders/PEND1/../../../admin/sweeps/run",
      "//admin//reconcile", "/api/callbacks/", "/api/callbacks/%2e%2e%2fadmin", "/admin", "/admin/",
      "/api/orders/PEND1/cancel/extra", "/%2e%2e/%2e%2e/admin/outbox", "/api/orders/" + "A".repeat(70),
      "/api/callbacks/" + "c".repeat(300), "/admin/exceptions/0", "/admin/exceptions/-1/resolve",
      "/admin/exceptions/99999999999999999999", "/admin/outbox/not-a-uuid/retry", "/api/orders/%20",
      "/api/inventory/a%2Fb", "/admin/outbox/../inventory/A", "/api/orders?orderNo=PEND1", "/*", "/api/*");
  private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
      "TRACE", "PROPFIND", "XYZZY", "G3T");

  private final TestApp app;
  private final HttpClient client;
  private final List<Hostile.Route> routes;
  private final Random random;

  Fuzzer(TestApp app, HttpClient client, List<Hostile.Route> routes, long seed) {
    this.app = app;
    this.client = client;
    this.routes = routes;
    this.random = new Random(seed);
  }

  Result run(int requests, int concurrency) {
    String before = Hostile.dump(app);
    Map<Integer, Integer> statuses = new TreeMap<>();
    List<String> wrong = new ArrayList<>();
    for (int done = 0; done < requests; done += concurrency) {
      List<Request> batch = new ArrayList<>();
      for (int i = 0; i < concurrency && done + i < requests; i++) {
        batch.add(next());
      }
      List<Future<Hostile.Answer>> answers = batch.stream()
          .map(r -> Hostile.send(client, r.method(), r.uri(), r.body(), r.headers())).toList();
      Future.join(answers).await();
      for (int i = 0; i < batch.size(); i++) {
        Hostile.Answer a = answers.get(i).result();
        statuses.merge(a.status(), 1, Integer::sum);
        if (a.status() < 400 || a.status() >= 500) {
          Request r = batch.get(i);
          wrong.add(r.kind() + " " + r.method() + " " + abbreviate(r.uri()) + " -> " + a.status() + " "
              + abbreviate(a.body()));
        }
      }
    }
    return new Result(requests, statuses, wrong, before.equals(Hostile.dump(app)));
  }

  private Request next() {
    Hostile.Route route = routes.get(random.nextInt(routes.size()));
    return switch (random.nextInt(12)) {
      case 0, 1 -> hostileField(route);
      case 2 -> hostilePath(route);
      case 3 -> hostileQuery(route);
      case 4 -> wrongType(route);
      case 5 -> brokenBody(route);
      case 6 -> forgedCallback();
      case 7 -> badAdminToken(route);
      case 8 -> hostilePathAndMethod();
      case 9 -> oversized(route);
      case 10 -> wrongMethodOrMediaType(route);
      default -> hostileExtraField(route);
    };
  }

  private Request hostileField(Hostile.Route route) {
    if (route.stringFields().isEmpty()) {
      return hostileQuery(route);
    }
    String field = pick(route.stringFields());
    byte[] body = Hostile.bodyWith(route, field, pick(Hostile.BODY_VALUES).json());
    return legit("field " + field, route, route.uri(), body);
  }

  private Request hostilePath(Hostile.Route route) {
    if (route.pathParams().isEmpty()) {
      return hostileQuery(route);
    }
    Map<String, String> params = new LinkedHashMap<>(route.pathParams());
    params.put(pick(new ArrayList<>(params.keySet())), pick(Hostile.URI_VALUES));
    return legit("path", route, route.uri(params, route.query()), validBody(route));
  }

  private Request hostileQuery(Hostile.Route route) {
    Map<String, String> query = new LinkedHashMap<>(route.query());
    String name = query.isEmpty() || random.nextBoolean() ? pick(List.of("x", "status", "limit", "%00", "a%C3%28"))
        : pick(new ArrayList<>(query.keySet()));
    query.put(name, pick(Hostile.URI_VALUES));
    return legit("query", route, route.uri(route.pathParams(), query), validBody(route));
  }

  private Request wrongType(Hostile.Route route) {
    if (route.stringFields().isEmpty()) {
      return brokenBody(route);
    }
    JsonObject body = route.body().copy();
    Object wrongValue = pick(List.of(12, -1.5, true, new JsonArray().add("x"), new JsonObject().put("a", "b"), ""));
    Hostile.set(body, pick(route.stringFields()), wrongValue);
    return legit("type", route, route.uri(), body.encode().getBytes(StandardCharsets.UTF_8));
  }

  private Request brokenBody(Hostile.Route route) {
    byte[] valid = route.body() == null ? "{\"a\":\"b\"}".getBytes(StandardCharsets.UTF_8)
        : route.body().encode().getBytes(StandardCharsets.UTF_8);
    byte[] body = switch (random.nextInt(6)) {
      case 0 -> java.util.Arrays.copyOf(valid, 1 + random.nextInt(valid.length - 1));
      case 1 -> {
        byte[] b = new byte[1 + random.nextInt(200)];
        random.nextBytes(b);
        b[0] = '{';
        yield b;
      }
      case 2 -> ("{\"a\":".repeat(40) + "1" + "}".repeat(40)).getBytes(StandardCharsets.UTF_8);
      case 3 -> "[1,2,3]".getBytes(StandardCharsets.UTF_8);
      case 4 -> ("{\"orderNo\":" + "9".repeat(2000) + "}").getBytes(StandardCharsets.UTF_8);
      default -> "\"just a string\"".getBytes(StandardCharsets.UTF_8);
    };
    return legit("body", route, route.uri(), body);
  }

  private Request forgedCallback() {
    Hostile.Route cb = routes.stream().filter(Hostile.Route::signed).findFirst().orElseThrow();
    byte[] body = cb.body().encode().getBytes(StandardCharsets.UTF_8);
    long now = System.currentTimeMillis() / 1000;
    String header = switch (random.nextInt(7)) {
      case 6 -> OrdergateSignature.header(TestApp.SECRET, now, "another-channel", body);
      case 0 -> null;
      case 1 -> OrdergateSignature.header("not-the-secret-0123456789", now, TestApp.CHANNEL, body);
      case 2 -> OrdergateSignature.header(TestApp.SECRET, now - 3600, TestApp.CHANNEL, body);
      case 3 -> OrdergateSignature.header(TestApp.SECRET, now, TestApp.CHANNEL, "{\"other\":1}".getBytes(StandardCharsets.UTF_8));
      case 4 -> "t=abc,v1=zz";
      default -> OrdergateSignature.header(TestApp.SECRET, now + 3600, TestApp.CHANNEL, body);
    };
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Content-Type", "application/json");
    if (header != null) {
      headers.put(OrdergateSignature.HEADER, header);
    }
    return new Request("forged", cb.method(), cb.uri(), body, headers);
  }

  /** An admin or API-key route with the credential missing, wrong, truncated or of the other kind. */
  private Request badAdminToken(Hostile.Route route) {
    Hostile.Route target = route.admin() || route.keyed() ? route
        : pick(routes.stream().filter(r -> r.admin() || r.keyed()).toList());
    String right = target.admin() ? TestApp.ADMIN_TOKEN : TestApp.API_KEY;
    String other = target.admin() ? TestApp.API_KEY : TestApp.ADMIN_TOKEN;
    byte[] body = validBody(target);
    Map<String, String> headers = Hostile.headers(target, body);
    switch (random.nextInt(5)) {
      case 0 -> headers.remove("Authorization");
      case 1 -> headers.put("Authorization", "Bearer " + right + "x");
      case 2 -> headers.put("Authorization", "Basic " + java.util.Base64.getEncoder()
          .encodeToString(("admin:" + right).getBytes(StandardCharsets.UTF_8)));
      case 3 -> headers.put("Authorization", "Bearer " + other);
      default -> headers.put("Authorization", "Bearer " + right.substring(1));
    }
    return new Request("token", target.method(), target.uri(), body, headers);
  }

  private Request hostilePathAndMethod() {
    HttpMethod method = HttpMethod.valueOf(pick(METHODS));
    String path = pick(HOSTILE_PATHS);
    byte[] body = method == HttpMethod.GET ? null : "{\"operator\":\"ops\"}".getBytes(StandardCharsets.UTF_8);
    return new Request("hostile path", method, path, body, body == null ? Map.of() : Map.of("Content-Type", "application/json"));
  }

  private Request oversized(Hostile.Route route) {
    return switch (random.nextInt(3)) {
      case 0 -> legit("huge body", route, route.uri(),
          ("{\"pad\":\"" + "p".repeat(70 * 1024) + "\"}").getBytes(StandardCharsets.UTF_8));
      case 1 -> {
        Map<String, String> headers = Hostile.headers(route, validBody(route));
        headers.put("X-Pad", "h".repeat(9000));
        yield new Request("huge header", route.method(), route.uri(), validBody(route), headers);
      }
      default -> legit("huge uri", route, route.uri() + (route.uri().contains("?") ? "&" : "?") + "q=" + "u".repeat(5000),
          validBody(route));
    };
  }

  private Request wrongMethodOrMediaType(Hostile.Route route) {
    if (route.body() != null && random.nextBoolean()) {
      byte[] body = validBody(route);
      Map<String, String> headers = Hostile.headers(route, body);
      headers.put("Content-Type", pick(List.of("text/plain", "application/xml", "multipart/form-data; boundary=x")));
      return new Request("media type", route.method(), route.uri(), body, headers);
    }
    HttpMethod method = route.method() == HttpMethod.GET ? HttpMethod.DELETE : HttpMethod.PATCH;
    return new Request("method", method, route.uri(), validBody(route), Hostile.headers(route, validBody(route)));
  }

  private Request hostileExtraField(Hostile.Route route) {
    JsonObject body = route.body() == null ? new JsonObject() : route.body().copy();
    body.put("extra", "@@HOSTILE@@");
    String text = body.encode();
    int at = text.indexOf("\"@@HOSTILE@@\"");
    byte[] nasty = pick(Hostile.BODY_VALUES).json();
    byte[] head = text.substring(0, at).getBytes(StandardCharsets.UTF_8);
    byte[] tail = text.substring(at + 13).getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[head.length + nasty.length + tail.length];
    System.arraycopy(head, 0, out, 0, head.length);
    System.arraycopy(nasty, 0, out, head.length, nasty.length);
    System.arraycopy(tail, 0, out, head.length + nasty.length, tail.length);
    return legit("extra field", route, route.uri(), out);
  }

  /** Signed and authorized as a legitimate caller would, so only the content is wrong. */
  private Request legit(String kind, Hostile.Route route, String uri, byte[] body) {
    return new Request(kind, route.method(), uri, body, Hostile.headers(route, body));
  }

  private static byte[] validBody(Hostile.Route route) {
    return route.body() == null ? null : route.body().encode().getBytes(StandardCharsets.UTF_8);
  }

  private <T> T pick(List<T> list) {
    return list.get(random.nextInt(list.size()));
  }

  private static String abbreviate(String s) {
    return s.length() > 160 ? s.substring(0, 160) + "...(" + s.length() + ")" : s;
  }
}
