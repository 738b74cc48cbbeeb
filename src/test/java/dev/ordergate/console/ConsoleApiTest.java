package dev.ordergate.console;

import dev.ordergate.console.ConsoleSupport.Session;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static dev.ordergate.console.ConsoleSupport.OPERATOR;
import static dev.ordergate.console.ConsoleSupport.PASSWORD;
import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The console's server side over HTTP: sessions and their cookie, CSRF, the login throttle, the
 * operator taken from the session, the audit log, keyset pagination and the response headers.
 */
class ConsoleApiTest {

  private static TestApp app;

  @BeforeAll
  static void start() {
    app = TestApp.start(ConsoleSupport.config());
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @BeforeEach
  void clean() {
    app.truncate();
    app.pool.query("TRUNCATE operator_sessions, operator_login_failures, audit_log").execute().await();
  }

  private static HttpResponse<Buffer> login(String name, String password, String host) {
    var req = app.http.post("/admin/login").putHeader("Content-Type", "application/json");
    if (host != null) {
      req.putHeader("Host", host);
    }
    return req.sendBuffer(Buffer.buffer(new JsonObject().put("name", name).put("password", password).encode())).await();
  }

  private static List<String> audit(String action) {
    List<String> out = new ArrayList<>();
    app.rows("SELECT operator || ' ' || via || ' ' || coalesce(result, '-') FROM audit_log WHERE action = $1 ORDER BY id",
        action).forEach(r -> out.add(r.getString(0)));
    return out;
  }

  @Test
  void loginGivesAStrictHttpOnlyCookieWhoseTokenIsNotStored() {
    HttpResponse<Buffer> resp = expect(login(OPERATOR, PASSWORD, null), 200);
    String cookie = resp.headers().getAll("Set-Cookie").get(0);
    assertTrue(cookie.startsWith("og_session="), cookie);
    assertTrue(cookie.toLowerCase().contains("; httponly"), cookie);
    assertTrue(cookie.contains("SameSite=Strict"), cookie);
    assertTrue(cookie.contains("Path=/"), cookie);
    assertFalse(cookie.contains("Secure"), "plain http on localhost: " + cookie);
    String token = cookie.substring("og_session=".length(), cookie.indexOf(';'));
    assertEquals(0, app.count("SELECT count(*) FROM operator_sessions WHERE token_hash = $1 OR csrf_token = $1", token));
    assertEquals(1, app.count("SELECT count(*) FROM operator_sessions WHERE operator = $1", OPERATOR));
    assertEquals("no-store", resp.getHeader("Cache-Control"));

    Session s = Session.login(app, OPERATOR, PASSWORD);
    JsonObject me = expect(s.get("/admin/session"), 200).bodyAsJsonObject();
    assertEquals(OPERATOR, me.getString("operator"));
    assertEquals("SESSION", me.getString("via"));
    assertEquals(s.csrf(), me.getString("csrfToken"));
    assertEquals(List.of("alice LOGIN OK", "alice LOGIN OK"), audit("LOGIN"));
    assertEquals(List.of("127.0.0.1"), app.rows("SELECT DISTINCT client FROM audit_log").stream()
        .map(r -> r.getString(0)).toList(), "the peer address of every entry");
  }

  @Test
  void outsideLocalhostTheCookieIsSecureWithTheHostPrefix() {
    String cookie = expect(login(OPERATOR, PASSWORD, "console.example.com"), 200).headers().getAll("Set-Cookie").get(0);
    assertTrue(cookie.startsWith("__Host-og_session="), cookie);
    assertTrue(cookie.contains("Secure"), cookie);
  }

  @Test
  void wrongPasswordsAreSlowThenThrottledEvenForTheRightPassword() {
    for (int i = 0; i < 3; i++) {
      long t0 = System.nanoTime();
      HttpResponse<Buffer> resp = login(OPERATOR, "wrong password " + i, null);
      assertTrue((System.nanoTime() - t0) / 1_000_000 >= 50, "a failed login answers after admin.login.failureDelayMs");
      assertEquals(401, resp.statusCode(), resp.bodyAsString());
      assertEquals("INVALID_CREDENTIALS", resp.bodyAsJsonObject().getString("error"));
      assertTrue(resp.headers().getAll("Set-Cookie").isEmpty());
    }
    HttpResponse<Buffer> throttled = login(OPERATOR, PASSWORD, null);
    assertEquals(429, throttled.statusCode(), throttled.bodyAsString());
    assertEquals("TOO_MANY_ATTEMPTS", throttled.bodyAsJsonObject().getString("error"));
    long retryAfter = Long.parseLong(throttled.getHeader("Retry-After"));
    assertTrue(retryAfter > 0 && retryAfter <= 30, "Retry-After " + retryAfter);
    assertEquals(0, app.count("SELECT count(*) FROM operator_sessions"));
    // The other account is not affected, and an unknown name is refused like a wrong password.
    expect(login(ConsoleSupport.OTHER, ConsoleSupport.OTHER_PASSWORD, null), 200);
    assertEquals("INVALID_CREDENTIALS", login("mallory", "whatever", null).bodyAsJsonObject().getString("error"));
    assertEquals(List.of("alice LOGIN INVALID_CREDENTIALS", "alice LOGIN INVALID_CREDENTIALS",
        "alice LOGIN INVALID_CREDENTIALS", "alice LOGIN THROTTLED", "bob LOGIN OK", "mallory LOGIN INVALID_CREDENTIALS"),
        audit("LOGIN"));
    // Once the back-off has passed, the right password signs in and clears the count.
    app.pool.query("UPDATE operator_login_failures SET last_failed_at = now() - interval '1 hour'").execute().await();
    expect(login(OPERATOR, PASSWORD, null), 200);
    assertEquals(0, app.count("SELECT count(*) FROM operator_login_failures WHERE operator = 'alice'"));
  }

  @Test
  void aFloodOfSignInsChecksOnlyAFewPasswordsAtOnce() {
    // Made-up names, so no per-name throttle applies: each attempt would cost a full hash. From a
    // client address of its own, so the per-address count does not touch the other tests.
    var flooder = io.vertx.ext.web.client.WebClient.create(app.vertx, new io.vertx.ext.web.client.WebClientOptions()
        .setDefaultHost("127.0.0.1").setDefaultPort(app.verticle.port()).setLocalAddress("127.0.0.2"));
    List<io.vertx.core.Future<HttpResponse<Buffer>>> sent = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      sent.add(flooder.post("/admin/login").putHeader("Content-Type", "application/json")
          .sendBuffer(Buffer.buffer(new JsonObject().put("name", "guess" + i).put("password", "x").encode())));
    }
    io.vertx.core.Future.all(sent).await();
    flooder.close();
    long busy = sent.stream().filter(f -> f.result().statusCode() == 503).count();
    long refused = sent.stream().filter(f -> f.result().statusCode() == 401).count();
    long throttled = sent.stream().filter(f -> f.result().statusCode() == 429).count();
    assertEquals(20, busy + refused + throttled);
    assertTrue(busy > 0 && refused >= 4, busy + " busy, " + refused + " refused, " + throttled + " throttled");
    assertEquals("1", sent.stream().filter(f -> f.result().statusCode() == 503).findFirst().orElseThrow()
        .result().getHeader("Retry-After"));
  }

  @Test
  void tenFailedSignInsFromOneAddressLockItOutWhateverTheNames() {
    var guesser = io.vertx.ext.web.client.WebClient.create(app.vertx, new io.vertx.ext.web.client.WebClientOptions()
        .setDefaultHost("127.0.0.1").setDefaultPort(app.verticle.port()).setLocalAddress("127.0.0.3"));
    try {
      for (int i = 0; i < dev.ordergate.http.AuthThrottle.MAX_FAILURES; i++) {
        assertEquals(401, guesser.post("/admin/login").putHeader("Content-Type", "application/json")
            .sendBuffer(Buffer.buffer(new JsonObject().put("name", "name" + i).put("password", "x").encode()))
            .await().statusCode());
      }
      HttpResponse<Buffer> locked = guesser.post("/admin/login").putHeader("Content-Type", "application/json")
          .sendBuffer(Buffer.buffer(new JsonObject().put("name", OPERATOR).put("password", PASSWORD).encode())).await();
      assertEquals(429, locked.statusCode(), locked.bodyAsString());
      assertEquals("TOO_MANY_FAILED_LOGINS", locked.bodyAsJsonObject().getString("error"));
      assertEquals(0, app.count("SELECT count(*) FROM operator_sessions"));
      // Another address signs in as before.
      expect(login(OPERATOR, PASSWORD, null), 200);
    } finally {
      guesser.close();
    }
  }

  @Test
  void loginRefusesFormsAndOtherSites() {
    var form = app.http.post("/admin/login").putHeader("Content-Type", "application/x-www-form-urlencoded")
        .sendBuffer(Buffer.buffer("name=alice&password=x")).await();
    assertEquals(415, form.statusCode());
    var crossSite = app.http.post("/admin/login").putHeader("Content-Type", "application/json")
        .putHeader("Sec-Fetch-Site", "cross-site")
        .sendBuffer(Buffer.buffer(new JsonObject().put("name", OPERATOR).put("password", PASSWORD).encode())).await();
    assertEquals(403, crossSite.statusCode());
    assertEquals("CSRF_REJECTED", crossSite.bodyAsJsonObject().getString("error"));
  }

  @Test
  void aStateChangeWithoutTheCsrfTokenOrFromAnotherSiteIsRefusedAndDoesNothing() {
    Session s = Session.login(app, OPERATOR, PASSWORD);
    var noToken = s.send(HttpMethod.POST, "/admin/sweeps/run", null, req -> { });
    assertEquals(403, noToken.statusCode(), noToken.bodyAsString());
    assertEquals("CSRF_REJECTED", noToken.bodyAsJsonObject().getString("error"));
    var wrongToken = s.send(HttpMethod.POST, "/admin/sweeps/run", null, req -> req.putHeader("X-CSRF-Token", "x" + s.csrf()));
    assertEquals(403, wrongToken.statusCode());
    var crossSite = s.send(HttpMethod.POST, "/admin/sweeps/run", null,
        req -> req.putHeader("X-CSRF-Token", s.csrf()).putHeader("Sec-Fetch-Site", "cross-site"));
    assertEquals(403, crossSite.statusCode());
    var otherOrigin = s.send(HttpMethod.POST, "/admin/sweeps/run", null,
        req -> req.putHeader("X-CSRF-Token", s.csrf()).putHeader("Origin", "http://evil.example"));
    assertEquals(403, otherOrigin.statusCode());
    assertEquals(0, app.count("SELECT count(*) FROM sweep_runs"));
    assertEquals(List.of(), audit("RUN_SWEEP"));

    expect(s.post("/admin/sweeps/run", null), 200);
    assertEquals(1, app.count("SELECT count(*) FROM sweep_runs"));
    assertEquals(List.of("alice SESSION OK"), audit("RUN_SWEEP"));
    // A GET needs no token (it changes nothing).
    expect(s.get("/admin/sweeps"), 200);
  }

  @Test
  void theSessionNamesTheOperatorOfAManualCloseAndABodyCannot() {
    app.setStock("A", 10);
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    Session s = Session.login(app, OPERATOR, PASSWORD);
    var named = s.post("/admin/orders/O1/cancel", new JsonObject().put("operator", "mallory").put("reason", "x"));
    assertEquals(400, named.statusCode(), named.bodyAsString());
    var noReason = s.post("/admin/orders/O1/cancel", new JsonObject());
    assertEquals(400, noReason.statusCode());
    assertEquals("PENDING_PAYMENT", app.getOrder("O1").getString("status"));

    expect(s.post("/admin/orders/O1/cancel", new JsonObject().put("reason", "customer phoned")), 200);
    var t = app.rows("SELECT source, actor, reference FROM order_transitions WHERE order_no = 'O1' AND to_status = 'CANCELLED'").get(0);
    assertEquals("OPERATOR", t.getString(0));
    assertEquals(OPERATOR, t.getString(1));
    assertEquals("customer phoned", t.getString(2));
    assertEquals(List.of("alice SESSION CANCELLED"), audit("CLOSE_ORDER"));
    // The second close loses at the gate and says so, in the answer and in the log.
    assertEquals(200, s.post("/admin/orders/O1/cancel", new JsonObject().put("reason", "again")).statusCode());
    assertEquals(List.of("alice SESSION CANCELLED", "alice SESSION ALREADY_CANCELLED"), audit("CLOSE_ORDER"));

    // The bearer token still works for automation and records the operator it names, as TOKEN.
    app.createOrder(order("O2", "u1", null, "A", 1, 500));
    expect(app.call(HttpMethod.POST, "/admin/orders/O2/cancel", new JsonObject().put("operator", "cron"), true), 200);
    assertEquals("cron TOKEN CANCELLED", audit("CLOSE_ORDER").get(2));
  }

  @Test
  void logoutAndTimeoutsEndTheSessionForEveryInstance() {
    Session s = Session.login(app, OPERATOR, PASSWORD);
    expect(s.post("/admin/logout", null), 200);
    assertEquals("SESSION_EXPIRED", s.get("/admin/session").bodyAsJsonObject().getString("error"));
    assertEquals(0, app.count("SELECT count(*) FROM operator_sessions"));
    assertEquals(List.of("alice SESSION OK"), audit("LOGOUT"));

    Session idle = Session.login(app, OPERATOR, PASSWORD);
    app.pool.query("UPDATE operator_sessions SET last_seen_at = now() - interval '31 minutes'").execute().await();
    assertEquals(401, idle.get("/admin/summary").statusCode());

    Session old = Session.login(app, OPERATOR, PASSWORD);
    app.pool.query("UPDATE operator_sessions SET expires_at = now() - interval '1 second'").execute().await();
    assertEquals(401, old.get("/admin/summary").statusCode());

    // Background polling does not keep a session alive; a person's request does.
    Session polled = Session.login(app, OPERATOR, PASSWORD);
    app.pool.query("UPDATE operator_sessions SET last_seen_at = now() - interval '10 minutes'").execute().await();
    expect(polled.send(HttpMethod.GET, "/admin/summary", null, req -> req.putHeader("X-Background", "1")), 200);
    assertTrue(app.count("SELECT count(*) FROM operator_sessions WHERE last_seen_at < now() - interval '9 minutes'") == 1);
    expect(polled.get("/admin/summary"), 200);
    assertEquals(0, app.count("SELECT count(*) FROM operator_sessions WHERE last_seen_at < now() - interval '9 minutes'"));

    assertEquals(401, app.http.get("/admin/summary").putHeader("Cookie", "og_session=forged").send().await().statusCode());
    assertEquals(401, app.http.get("/admin/summary").send().await().statusCode());
  }

  /** Follows next links of {@code first} with limit 4, inserting rows newer than all after each page. */
  private List<Long> walk(String first, Session s, String key, Runnable arrive) {
    List<JsonObject> seen = ConsoleSupport.follow(first, s::get, arrive);
    return seen.stream().map(r -> r.getLong(key)).toList();
  }

  private static void assertNewestFirstOnce(List<Long> expected, List<Long> seen) {
    assertEquals(expected.stream().sorted((a, b) -> Long.compare(b, a)).toList(), seen);
  }

  @Test
  void nextLinksVisitEveryRowOnceNewestFirstWhileRowsArrive() {
    Session s = Session.login(app, OPERATOR, PASSWORD);
    AtomicInteger n = new AtomicInteger();
    Runnable newException = () -> app.pool.preparedQuery("INSERT INTO exception_orders (order_no, kind, channel, txn_id, "
        + "amount_cents, status) VALUES ($1, 'LATE_AFTER_CANCEL', 'sandbox', $1, 100, 'MANUAL_REVIEW')")
        .execute(io.vertx.sqlclient.Tuple.of("X" + n.incrementAndGet())).await();
    IntStream.range(0, 10).forEach(i -> newException.run());
    List<Long> before = app.rows("SELECT id FROM exception_orders").stream().map(r -> r.getLong(0)).toList();
    assertNewestFirstOnce(before, walk("/admin/exceptions?status=MANUAL_REVIEW&limit=4", s, "id", newException));
    assertEquals(13, app.count("SELECT count(*) FROM exception_orders"), "three pages, three arrivals");

    Runnable newDead = () -> app.pool.query("INSERT INTO outbox_events (type, order_no, payload, status) "
        + "VALUES ('NOTIFY_SMS', 'O', '{}', 'DEAD')").execute().await();
    IntStream.range(0, 9).forEach(i -> newDead.run());
    List<Long> seqs = app.rows("SELECT seq FROM outbox_events_shown").stream().map(r -> r.getLong(0)).toList();
    assertNewestFirstOnce(seqs, walk("/admin/outbox?status=DEAD&limit=4", s, "seq", newDead));

    Runnable newRun = () -> app.pool.query("INSERT INTO sweep_runs (instance_id) VALUES ('i')").execute().await();
    IntStream.range(0, 5).forEach(i -> newRun.run());
    List<Long> runs = app.rows("SELECT id FROM sweep_runs").stream().map(r -> r.getLong(0)).toList();
    assertNewestFirstOnce(runs, walk("/admin/sweeps?limit=2", s, "id", newRun));

    Runnable newAudit = () -> app.pool.query("INSERT INTO audit_log (operator, via, action) VALUES ('x', 'TOKEN', 'TEST')")
        .execute().await();
    IntStream.range(0, 7).forEach(i -> newAudit.run());
    List<Long> audits = app.rows("SELECT id FROM audit_log WHERE action = 'TEST'").stream().map(r -> r.getLong(0)).toList();
    assertNewestFirstOnce(audits, walk("/admin/audit?action=TEST&limit=3", s, "id", newAudit));

    // The filter travels in the next link: only the filtered rows are visited.
    HttpResponse<Buffer> first = expect(s.get("/admin/audit?action=TEST&limit=3"), 200);
    assertTrue(ConsoleSupport.next(first).startsWith("/admin/audit?action=TEST&after="), first.getHeader("Link"));
    assertTrue(ConsoleSupport.next(first).endsWith("&limit=3"), first.getHeader("Link"));
    // A cursor of one list is refused by another.
    String cursor = ConsoleSupport.next(first).replaceAll(".*after=([^&]+).*", "$1");
    assertEquals(400, s.get("/admin/exceptions?after=" + cursor).statusCode());
    assertEquals(400, s.get("/admin/exceptions?after=%%%").statusCode());
  }

  @Test
  void ordersByTxnIdPageToo() {
    app.setStock("A", 100);
    for (int i = 1; i <= 3; i++) {
      app.createOrder(order("O" + i, "u1", null, "A", 1, 100));
    }
    app.callback(TestApp.payment("T-OTHER", "O1", 100));
    app.callback(TestApp.payment("T-SHARED", "O2", 100));
    // The same txn id on the second channel (a receipt written as that channel's callback would).
    app.pool.query("INSERT INTO payment_receipts (channel, txn_id, order_no, amount_cents, gateway_status) "
        + "VALUES ('" + ConsoleSupport.SECOND_CHANNEL + "', 'T-SHARED', 'O3', 100, 'SUCCESS')").execute().await();
    Session s = Session.login(app, OPERATOR, PASSWORD);
    List<JsonObject> seen = ConsoleSupport.follow("/admin/orders?txnId=T-SHARED&limit=1", s::get, () -> { });
    assertEquals(List.of("O3", "O2"), seen.stream().map(o -> o.getString("orderNo")).toList());
    assertEquals(400, s.get("/admin/orders").statusCode());

    JsonObject record = expect(s.get("/admin/orders/O2"), 200).bodyAsJsonObject();
    assertEquals("PAID", record.getString("status"));
    assertEquals(2, record.getJsonArray("transitions").size());
    assertEquals("T-SHARED", record.getJsonArray("receipts").getJsonObject(0).getString("txnId"));
    assertEquals(0, record.getJsonArray("exceptions").size());
    assertNull(record.getValue("coupon"));
  }

  @Test
  void summaryCountsWhatTheOverviewShows() {
    app.setStock("A", 100);
    app.createOrder(order("P1", "u1", null, "A", 1, 100));
    app.createOrder(order("P2", "u1", null, "A", 1, 100).put("paymentTimeoutSeconds", 1));
    app.pool.query("UPDATE orders SET expires_at = now() - interval '1 minute' WHERE order_no = 'P2'").execute().await();
    app.createOrder(order("L1", "u1", null, "A", 1, 50_000));
    expect(app.call(HttpMethod.POST, "/api/orders/L1/cancel", null, false), 200);
    app.callback(TestApp.payment("T-LATE", "L1", 50_000));
    // A refund the gateway accepted and settles later has its own card, not the pending one.
    app.pool.query("INSERT INTO exception_orders (order_no, kind, channel, txn_id, amount_cents, status, created_at) "
        + "VALUES ('X1', 'DOUBLE_PAYMENT', 'sandbox', 'TX1', 100, 'REFUND_PROCESSING', now() - interval '2 days')")
        .execute().await();
    Session s = Session.login(app, OPERATOR, PASSWORD);
    JsonObject sum = expect(s.get("/admin/summary"), 200).bodyAsJsonObject();
    assertEquals(2, sum.getLong("pendingOrders"));
    assertEquals(1, sum.getLong("overdueOrders"));
    assertEquals(1, sum.getLong("manualReview"));
    assertEquals(1, sum.getLong("refundsProcessing"));
    assertEquals(0, sum.getLong("refundsPending"));
    assertEquals(1, sum.getJsonObject("exceptionsToday").getLong("LATE_AFTER_CANCEL"));
    assertNull(sum.getValue("lastSweep"));
    expect(s.post("/admin/reconcile/run", null), 200);
    expect(s.post("/admin/sweeps/run", null), 200);
    sum = expect(s.get("/admin/summary"), 200).bodyAsJsonObject();
    assertEquals(1, sum.getJsonObject("lastSweep").getLong("cancelled"));
    assertEquals(0, sum.getLong("overdueOrders"));
    assertTrue(sum.getJsonObject("lastReconciliation").containsKey("ok"));
    assertTrue(sum.getDouble("cancelLatenessP99Seconds") >= 60, sum.encode());
    assertEquals(List.of("alice SESSION OK"), audit("RUN_SWEEP"));
    assertEquals(1, audit("RUN_RECONCILIATION").size());
  }

  @Test
  void everyAnswerCarriesTheSecurityHeadersAndConsoleFilesAreVersioned() {
    HttpResponse<Buffer> index = expect(app.http.get("/console/").send().await(), 200);
    String csp = index.getHeader("Content-Security-Policy");
    assertTrue(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe"), csp);
    assertEquals("no-cache", index.getHeader("Cache-Control"));
    String html = index.bodyAsString();
    String version = html.replaceAll("(?s).*/console/([0-9a-f]{12})/js/app\\.js.*", "$1");
    assertEquals(12, version.length(), html);
    HttpResponse<Buffer> js = expect(app.http.get("/console/" + version + "/js/app.js").send().await(), 200);
    assertTrue(js.getHeader("Cache-Control").contains("max-age=31536000"), js.getHeader("Cache-Control"));
    assertTrue(js.getHeader("Content-Type").contains("javascript"), js.getHeader("Content-Type"));
    assertEquals(404, app.http.get("/console/000000000000/js/app.js").send().await().statusCode());
    assertFalse(html.contains("<script>") || html.contains("style="), "no inline script or style");

    for (String path : List.of("/admin/summary", "/api/orders/nope", "/health/live")) {
      HttpResponse<Buffer> r = app.http.get(path).send().await();
      assertEquals("no-store", r.getHeader("Cache-Control"), path);
      assertNotEquals(null, r.getHeader("Content-Security-Policy"), path);
      assertEquals("DENY", r.getHeader("X-Frame-Options"), path);
    }
  }
}
