package dev.ordergate.http;

import dev.ordergate.support.TestApp;
import io.vertx.core.http.HttpClient;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every route, every string it accepts (body fields, path parameters, query parameters), every
 * hostile value: a 4xx (400 naming the field where the value is readable text), and not one row
 * of any table changed. Then each route's valid request succeeds, so the walk reached the routes.
 */
class BadInputTest {

  private static TestApp app;
  private static HttpClient client;
  private static Hostile.Fixture fixture;

  @BeforeAll
  static void start() {
    app = TestApp.start(TestApp.baseConfig().put("outbox", new JsonObject().put("enabled", false)));
    client = Hostile.client(app);
    fixture = Hostile.setUp(app);
  }

  @AfterAll
  static void stop() {
    client.close().await();
    app.close();
  }

  @Test
  void theCatalogHasEveryRouteOfTheMainListener() {
    java.util.Set<String> mounted = new java.util.TreeSet<>();
    collect(app.verticle.mainRouter(), "", mounted);
    java.util.Set<String> catalog = new java.util.TreeSet<>();
    Hostile.routes(fixture).forEach(r -> catalog.add(r.method() + " " + r.path()));
    assertEquals(mounted, catalog, "a route is missing from Hostile.routes (or is gone)");
  }

  private static void collect(io.vertx.ext.web.Router router, String prefix, java.util.Set<String> out) {
    for (io.vertx.ext.web.Route route : router.getRoutes()) {
      // A path with parameters has no plain path; its name is the path as written.
      String path = route.getPath() != null ? route.getPath() : route.getName() == null ? "" : route.getName();
      if (route.getSubRouter() != null) {
        collect(route.getSubRouter(), prefix + path.replaceAll("/?\\*?$", ""), out);
      } else if (route.methods() != null && !route.methods().isEmpty()) {
        for (io.vertx.core.http.HttpMethod m : route.methods()) {
          out.add(m + " " + prefix + path);
        }
      }
    }
  }

  @Test
  void everyStringOfEveryRouteIsCheckedBeforeTheDatabase() {
    List<String> wrong = new ArrayList<>();
    int requests = 0;
    String before = Hostile.dump(app);
    List<Hostile.Route> routes = Hostile.routes(fixture);
    for (Hostile.Route route : routes) {
      for (String field : route.stringFields()) {
        for (Hostile.Nasty nasty : Hostile.BODY_VALUES) {
          byte[] body = Hostile.bodyWith(route, field, nasty.json());
          var answer = Hostile.send(client, route.method(), route.uri(), body, Hostile.headers(route, body)).await();
          requests++;
          boolean ok = answer.status() >= 400 && answer.status() < 500
              && (!nasty.namesField() || (answer.status() == 400 && answer.body().contains(field)));
          if (!ok) {
            wrong.add(route + " " + field + " = " + nasty.name() + " -> " + answer.status() + " " + answer.body());
          }
        }
      }
      for (String param : route.pathParams().keySet()) {
        for (String value : Hostile.URI_VALUES) {
          Map<String, String> params = new LinkedHashMap<>(route.pathParams());
          params.put(param, value);
          byte[] body = route.body() == null ? null : route.body().encode().getBytes(StandardCharsets.UTF_8);
          var answer = Hostile.send(client, route.method(), route.uri(params, route.query()), body,
              Hostile.headers(route, body)).await();
          requests++;
          if (answer.status() < 400 || answer.status() >= 500) {
            wrong.add(route + " path " + param + " = " + abbreviate(value) + " -> " + answer.status() + " " + answer.body());
          }
        }
      }
      List<String> queryNames = new ArrayList<>(route.query().keySet());
      queryNames.add("extra");
      for (String name : queryNames) {
        for (String value : Hostile.URI_VALUES) {
          Map<String, String> query = new LinkedHashMap<>(route.query());
          query.put(name, value);
          byte[] body = route.body() == null ? null : route.body().encode().getBytes(StandardCharsets.UTF_8);
          var answer = Hostile.send(client, route.method(), route.uri(route.pathParams(), query), body,
              Hostile.headers(route, body)).await();
          requests++;
          if (answer.status() < 400 || answer.status() >= 500) {
            wrong.add(route + " query " + name + " = " + abbreviate(value) + " -> " + answer.status() + " " + answer.body());
          }
        }
      }
      assertEquals(before, Hostile.dump(app), "a hostile request to " + route + " changed the database");
    }
    assertTrue(wrong.isEmpty(), requests + " hostile requests, " + wrong.size() + " not refused:\n" + String.join("\n", wrong));

    // The walk reached every route: its valid request is answered 2xx (writes last, they change rows).
    for (Hostile.Route route : routes.stream().sorted((a, b) -> Boolean.compare(a.writes(), b.writes())).toList()) {
      byte[] body = route.body() == null ? null : route.body().encode().getBytes(StandardCharsets.UTF_8);
      var answer = Hostile.send(client, route.method(), route.uri(), body, Hostile.headers(route, body)).await();
      // Answered by the route itself: 2xx (3xx for the console's redirect); a sign-in of an unknown
      // operator and a sign-out without a session are the routes' own refusals, past the guard.
      boolean own = route.path().equals("/admin/login") || route.path().equals("/admin/logout")
          || route.path().equals("/admin/session")
          || route.path().equals("/api/orders/:orderNo/payments") && answer.body().contains("CHANNEL_CANNOT_OPEN")
          || route.path().equals("/admin/reconcile/gateway") && answer.body().contains("CHANNEL_HAS_NO_BILL");
      assertTrue(answer.status() >= 200 && answer.status() < 400
          || own && answer.status() >= 400 && answer.status() < 500 && !answer.body().contains("VALIDATION_FAILED"),
          route + " valid -> " + answer.status() + " " + answer.body());
    }
    assertFalse(before.equals(Hostile.dump(app)), "the valid writes changed rows (the dump sees changes)");
  }

  @Test
  void rejectionsAreCountedInFullButLoggedSampled() throws InterruptedException {
    Thread.sleep(1100); // a fresh one-second window of the rejection log
    double before = app.metric("ordergate.http.rejections", "code", "VALIDATION_FAILED");
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.out;
    int flood = 300;
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      for (int i = 0; i < flood; i++) {
        byte[] body = "{\"operator\":\"\\u001b[2J\\nERROR forged\",\"reason\":\"x\"}".getBytes(StandardCharsets.UTF_8);
        Hostile.send(client, io.vertx.core.http.HttpMethod.POST, "/admin/orders/PEND1/cancel", body,
            Map.of("Authorization", "Bearer " + TestApp.ADMIN_TOKEN)).await();
      }
    } finally {
      System.setOut(original);
    }
    // Every one counted (a request the client lost and sent again may count twice).
    double counted = app.metric("ordergate.http.rejections", "code", "VALIDATION_FAILED") - before;
    assertTrue(counted >= flood && counted <= flood + 3, counted + " counted for " + flood);
    String log = captured.toString(StandardCharsets.UTF_8);
    long lines = log.lines().filter(l -> l.contains("RejectionLog")).count();
    assertTrue(lines >= 1 && lines < flood / 4, lines + " rejection lines for " + flood + " rejections");
    assertFalse(log.contains("\u001b"), "an escape character reached the log");
    assertFalse(log.lines().anyMatch(l -> l.startsWith("ERROR forged")), "a forged line reached the log");
  }

  @Test
  void controlCharactersInTheRequestPathAreEscapedInTheLog() {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.out;
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      // Past the guard's own check (a raw ESC byte in a URI would be refused by the client), a
      // message with control characters is escaped by the log pattern itself.
      org.slf4j.LoggerFactory.getLogger(BadInputTest.class).warn("path {}", "/api/\u001b[31mred\r\nFORGED");
    } finally {
      System.setOut(original);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    assertTrue(log.contains("/api/\\u001B[31mred\\u000D\\u000AFORGED"), log);
  }

  @Test
  void rawEscapeBytesInTheRequestPathAreRefusedAndNeverReachTheLog() throws Exception {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.out;
    String status;
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", app.verticle.port())) {
      s.setSoTimeout(5000);
      Thread.sleep(1100); // a fresh window of the rejection log, so this one is logged
      s.getOutputStream().write("GET /api/orders/\u001b[31mX\u001b]0;pwned\u0007 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
          .getBytes(StandardCharsets.ISO_8859_1));
      status = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1).lines().findFirst().orElse("");
      Thread.sleep(200);
    } finally {
      System.setOut(original);
    }
    assertTrue(status.startsWith("HTTP/1.1 400"), status);
    String log = captured.toString(StandardCharsets.UTF_8);
    assertTrue(log.contains("rejected GET /api/orders/\\u001B[31mX"), "the rejection was not logged escaped: " + log);
    assertFalse(log.contains("\u001b") || log.contains("\u0007"), "a raw control byte reached the log: " + log);
  }

  private static String abbreviate(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "...(" + s.length() + ")" : s;
  }
}
