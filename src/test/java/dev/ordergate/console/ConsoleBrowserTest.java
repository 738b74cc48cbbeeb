package dev.ordergate.console;

import dev.ordergate.support.TestApp;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;

import static dev.ordergate.console.Browser.test;
import static dev.ordergate.console.ConsoleSupport.OPERATOR;
import static dev.ordergate.console.ConsoleSupport.PASSWORD;
import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The console in a real headless Chromium against the real service and PostgreSQL: sign-in, each
 * screen over data the test made through the API, every operator action with its effect checked in
 * the database and the audit log, pagination, CSRF from another origin, and markup in stored values.
 * Screenshots of each screen go to target/console-screenshots (the README's are in docs/console).
 */
class ConsoleBrowserTest {

  private static final long THRESHOLD = 1_000;
  private static TestApp app;
  private static Vertx endpointVertx;
  private static HttpServer endpoint;
  /** The refund endpoint's answer. */
  private static volatile int refundStatus = 500;
  private static Browser browser;

  @BeforeAll
  static void start() throws Exception {
    endpointVertx = Vertx.vertx();
    endpoint = endpointVertx.createHttpServer().requestHandler(req -> {
      if (req.path().equals("/evil")) {
        // Another origin (same site: 127.0.0.1, another port) whose page posts to the console's API.
        String target = req.getParam("target");
        req.response().putHeader("Content-Type", "text/html").end("<!doctype html><form method=post enctype=text/plain action=\""
            + target + "\"><input type=hidden name=x value=y><button id=go type=submit>win a prize</button></form>");
        return;
      }
      req.body().onSuccess(b -> req.response().setStatusCode(refundStatus).end());
    }).listen(0, "127.0.0.1").await();
    JsonObject config = ConsoleSupport.config();
    JsonObject payments = config.getJsonObject("payments");
    payments.put("autoRefundMaxCents", THRESHOLD);
    payments.getJsonObject("channels").getJsonObject(TestApp.CHANNEL)
        .put("refundUrl", "http://127.0.0.1:" + endpoint.actualPort() + "/refund");
    config.put("outbox", new JsonObject().put("pollMs", 100).put("baseDelayMs", 20).put("maxAttempts", 2));
    app = TestApp.start(config);
    browser = Browser.start("http://127.0.0.1:" + app.verticle.port());
  }

  @AfterAll
  static void stop() throws Exception {
    if (browser != null) {
      browser.close();
    }
    if (app != null) {
      app.close();
    }
    endpointVertx.close().await();
  }

  @BeforeEach
  void clean() {
    app.truncate();
    app.pool.query("TRUNCATE operator_sessions, operator_login_failures, audit_log").execute().await();
    refundStatus = 500;
    app.setStock("A", 1000);
    browser.driver.manage().deleteAllCookies();
  }

  @AfterEach
  void noScriptRan() {
    assertEquals(null, browser.script("return window.__xss === undefined ? null : String(window.__xss)"),
        "markup from the database ran as script");
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private static void signIn() {
    browser.open("#/overview");
    browser.await(By.id("login-name")).sendKeys(OPERATOR);
    browser.driver.findElement(By.id("login-password")).sendKeys(PASSWORD);
    browser.driver.findElement(test("login-submit")).click();
    browser.awaitText(test("operator"), OPERATOR);
  }

  private static void go(String hash) {
    browser.script("location.hash = arguments[0]", hash);
  }

  private static String text(By by) {
    return browser.await(by).getText();
  }

  private static void eventually(String what, BooleanSupplier condition) {
    long deadline = System.currentTimeMillis() + 15_000;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  private static List<String> audit(String action) {
    List<String> out = new ArrayList<>();
    app.rows("SELECT operator || ' ' || via || ' ' || coalesce(result, '-') || ' ' || coalesce(target, '') "
        + "FROM audit_log WHERE action = $1 ORDER BY id", action).forEach(r -> out.add(r.getString(0).trim()));
    return out;
  }

  private static String status(String table, String where, Object... params) {
    return app.rows("SELECT status FROM " + table + " WHERE " + where, params).get(0).getString(0);
  }

  /** A cancelled order paid afterwards: a late payment, above the threshold (manual review) unless small. */
  private static long latePayment(String orderNo, String txnId, long cents) {
    app.createOrder(order(orderNo, "u1", null, "A", 1, cents));
    expect(app.call(HttpMethod.POST, "/api/orders/" + orderNo + "/cancel", null, false), 200);
    app.callback(payment(txnId, orderNo, cents));
    return app.rows("SELECT id FROM exception_orders WHERE txn_id = $1", txnId).get(0).getLong(0);
  }

  // ---- tests -------------------------------------------------------------------------------------

  @Test
  void signInWrongPasswordAndSignOut() {
    browser.open("#/overview");
    browser.await(By.id("login-name")).sendKeys(OPERATOR);
    browser.driver.findElement(By.id("login-password")).sendKeys("not the password");
    browser.driver.findElement(test("login-submit")).click();
    browser.awaitText(test("login-message"), "Wrong name or password");
    browser.screenshot("login");
    assertEquals(0, app.count("SELECT count(*) FROM operator_sessions"));

    browser.driver.findElement(By.id("login-password")).sendKeys(PASSWORD);
    browser.driver.findElement(test("login-submit")).click();
    browser.awaitText(test("operator"), OPERATOR);
    assertEquals(1, app.count("SELECT count(*) FROM operator_sessions WHERE operator = 'alice'"));
    // The cookie is HttpOnly: the page's script cannot read it.
    assertEquals("", browser.script("return document.cookie"));

    browser.driver.findElement(test("logout")).click();
    browser.await(By.id("login-name"));
    assertEquals(0, app.count("SELECT count(*) FROM operator_sessions"));
    assertEquals(List.of("alice LOGIN INVALID_CREDENTIALS", "alice LOGIN OK"), audit("LOGIN"));
    assertEquals(List.of("alice SESSION OK"), audit("LOGOUT"));
    // After sign-out a reload shows the login form again: nothing is left that signs in.
    browser.open("#/overview");
    browser.await(By.id("login-name"));
  }

  @Test
  void aPageOnAnotherOriginCannotMakeTheSignedInBrowserRunASweep() {
    signIn();
    String target = "http://127.0.0.1:" + app.verticle.port() + "/admin/sweeps/run";
    browser.driver.get("http://127.0.0.1:" + endpoint.actualPort() + "/evil?target=" + target);
    browser.await(By.id("go")).click();
    browser.until(d -> d.getPageSource().contains("CSRF_REJECTED"));
    assertEquals(0, app.count("SELECT count(*) FROM sweep_runs"));
    assertEquals(List.of(), audit("RUN_SWEEP"));
    // The console's own page, with the session's token, may.
    browser.open("#/sweeps");
    browser.await(test("run-sweep")).click();
    browser.awaitText(test("action-message"), "Run ");
    assertEquals(1, app.count("SELECT count(*) FROM sweep_runs"));
    // A script on the console's origin without the token is refused as well.
    Object answer = ((org.openqa.selenium.JavascriptExecutor) browser.driver).executeAsyncScript(
        "const done = arguments[0]; fetch('/admin/sweeps/run', {method: 'POST'}).then(r => r.json()).then(j => done(j.error));");
    assertEquals("CSRF_REJECTED", answer);
    assertEquals(1, app.count("SELECT count(*) FROM sweep_runs"));
  }

  @Test
  void everyScreenShowsRealDataAndEveryActionTakesEffect() {
    // A late payment above the threshold (manual review), a double payment and a late payment that
    // is refunded automatically until the endpoint's failures make the refund dead.
    long late = latePayment("LATE-1", "T-LATE", 50_000);
    app.createOrder(order("DOUBLE-1", "u2", null, "A", 2, 300));
    app.callback(payment("T-D1", "DOUBLE-1", 600));
    app.callback(payment("T-D2", "DOUBLE-1", 600));
    long dead = latePayment("DEAD-1", "T-DEAD", 500);
    eventually("the refund is dead", () -> "REFUND_FAILED".equals(status("exception_orders", "id = $1", dead)));
    // An order due for the sweep, and one to close by hand.
    app.createOrder(order("DUE-1", "u3", null, "A", 1, 100).put("paymentTimeoutSeconds", 1));
    app.pool.query("UPDATE orders SET expires_at = now() - interval '5 seconds' WHERE order_no = 'DUE-1'").execute().await();
    app.createOrder(order("OPEN-1", "u4", null, "A", 3, 250));

    // The double payment (600 cents, below the threshold) is refunded automatically too, and dies as well.
    eventually("both refunds are dead", () -> app.count("SELECT count(*) FROM exception_orders WHERE status = 'REFUND_FAILED'") == 2);

    signIn();
    browser.awaitText(test("card-late"), "2");
    browser.awaitText(test("card-refunds-failed"), "2");
    browser.awaitText(test("card-overdue"), "1");
    browser.awaitText(test("updated"), "updated");
    assertTrue(text(test("card-double")).startsWith("1"), text(test("card-double")));
    // Hidden tab: polling pauses (and says so); visible again: it refreshes at once.
    browser.script("Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => 'hidden'});"
        + "document.dispatchEvent(new Event('visibilitychange'));");
    browser.awaitText(test("updated"), "(paused)");
    app.createOrder(order("NEW-1", "u9", null, "A", 1, 100));
    browser.script("Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => 'visible'});"
        + "document.dispatchEvent(new Event('visibilitychange'));");
    browser.awaitText(test("card-pending"), "3");

    // Run a sweep from the sweeps screen.
    go("#/sweeps");
    browser.await(test("run-sweep")).click();
    browser.awaitText(test("action-message"), "cancelled 1 of 1");
    assertEquals("CANCELLED", status("orders", "order_no = 'DUE-1'"));
    assertEquals(1, app.count("SELECT count(*) FROM sweep_runs WHERE cancelled = 1"));
    browser.awaitText(test("sweeps-table"), app.verticle.sweeper().instanceId());
    assertTrue(text(test("sweep-settings")).contains("batchSize"));
    browser.screenshot("sweeps");
    assertEquals("alice SESSION OK instance " + app.verticle.sweeper().instanceId(), audit("RUN_SWEEP").get(0));

    // The queue lists all three; the detail of the late payment shows history and gateway data.
    go("#/exceptions");
    browser.awaitText(test("exceptions-table"), "DOUBLE_PAYMENT");
    String queue = text(test("exceptions-table"));
    assertTrue(queue.contains("LATE-1") && queue.contains("DEAD-1") && queue.contains("REFUND_FAILED"), queue);
    browser.screenshot("exceptions");
    // A filter narrows the queue (and travels in the URL).
    new org.openqa.selenium.support.ui.Select(browser.driver.findElement(By.id("kind"))).selectByValue("DOUBLE_PAYMENT");
    browser.driver.findElement(test("apply-filters")).click();
    browser.until(d -> d.getCurrentUrl().contains("kind=DOUBLE_PAYMENT"));
    browser.until(d -> !text(test("exceptions-table")).contains("LATE-1"));
    assertTrue(text(test("exceptions-table")).contains("DOUBLE-1"));

    go("#/exceptions/" + late);
    browser.awaitText(test("history-table"), "MANUAL_REVIEW");
    browser.awaitText(By.id("view"), "Receipt: SUCCESS");
    browser.await(By.id("resolve-note")).sendKeys("refunded by bank transfer, ticket 42");
    browser.driver.findElement(test("resolve-submit")).click();
    browser.awaitText(test("exception-status"), "RESOLVED");
    browser.screenshot("exception-detail");
    var resolved = app.rows("SELECT status, resolved_by, resolution_note FROM exception_orders WHERE id = $1", late).get(0);
    assertEquals("RESOLVED", resolved.getString(0));
    assertEquals(OPERATOR, resolved.getString(1));
    assertEquals("refunded by bank transfer, ticket 42", resolved.getString(2));
    assertEquals(List.of("alice SESSION OK exception " + late), audit("RESOLVE_EXCEPTION"));

    // Retry the dead refund from its exception; the endpoint now accepts it.
    refundStatus = 200;
    go("#/exceptions/" + dead);
    browser.await(test("retry-refund")).click();
    browser.awaitText(test("exception-status"), "REFUND");
    eventually("the retried refund is confirmed", () -> "REFUNDED".equals(status("exception_orders", "id = $1", dead)));
    // Each attempt of the refund request is logged: two failures, then the delivery after the retry.
    assertEquals(List.of("1 RETRY HTTP 500", "2 DEAD HTTP 500", "1 DELIVERED -"), app.rows(
        "SELECT a.attempt || ' ' || a.outcome || ' ' || coalesce(substr(a.error, 1, 8), '-') FROM outbox_attempts a "
        + "JOIN outbox_events e ON e.id = a.event_id WHERE e.exception_id = $1 ORDER BY a.id", dead)
        .stream().map(r -> r.getString(0)).toList());
    // Events delivered at the first try (here: to the log sink) log nothing.
    assertEquals(0, app.count("SELECT count(*) FROM outbox_attempts a JOIN outbox_events e ON e.id = a.event_id "
        + "WHERE e.exception_id IS NULL"));
    go("#/exceptions/" + dead);
    browser.awaitText(test("refunds-table"), "DELIVERED");
    String attempts = text(test("attempt-log"));
    assertTrue(attempts.contains("#1") && attempts.contains("DEAD") && attempts.contains("HTTP 500 from"), attempts);
    browser.screenshot("refund-attempts");
    assertEquals(1, audit("RETRY_OUTBOX_EVENT").size());
    assertTrue(audit("RETRY_OUTBOX_EVENT").get(0).startsWith("alice SESSION OK event "));

    // Outbox: a dead event listed with its error (made dead now: the endpoint fails again).
    refundStatus = 503;
    long dead2 = latePayment("DEAD-2", "T-DEAD-2", 400);
    eventually("the second refund is dead", () -> "REFUND_FAILED".equals(status("exception_orders", "id = $1", dead2)));
    go("#/outbox?status=DEAD");
    browser.awaitText(test("outbox-table"), "HTTP 503");
    browser.script("document.querySelector(\"[data-testid='outbox-table'] details\").open = true");
    browser.awaitText(test("attempt-log"), "DEAD");
    browser.screenshot("outbox");
    refundStatus = 200;
    browser.await(test("retry-event")).click();
    browser.awaitText(test("action-message"), "pending again");
    eventually("the outbox retry is delivered", () -> "REFUNDED".equals(status("exception_orders", "id = $1", dead2)));
    assertEquals(2, audit("RETRY_OUTBOX_EVENT").size());

    // The order: looked up by txn id, its timeline, then closed by hand through the gate.
    go("#/order?q=T-D2");
    browser.awaitText(test("order-no"), "DOUBLE-1");
    assertTrue(text(test("timeline")).contains("PAYMENT_CALLBACK"));
    go("#/order/OPEN-1");
    browser.awaitText(test("order-status"), "PENDING_PAYMENT");
    browser.await(By.id("close-reason")).sendKeys("customer asked on the phone");
    browser.driver.findElement(test("close-submit")).click();
    browser.awaitText(test("order-status"), "CANCELLED");
    String timeline = text(test("timeline"));
    assertTrue(timeline.contains("OPERATOR") && timeline.contains(OPERATOR) && timeline.contains("customer asked on the phone"),
        timeline);
    // The whole record as a JSON file.
    browser.driver.findElement(test("download-json")).click();
    java.nio.file.Path file = browser.downloads.resolve("order-OPEN-1.json");
    eventually("the JSON download is saved", () -> java.nio.file.Files.exists(file));
    JsonObject downloaded = browser.until(d -> {
      try {
        return new JsonObject(java.nio.file.Files.readString(file));
      } catch (Exception partial) {
        return null;
      }
    });
    assertEquals("CANCELLED", downloaded.getString("status"));
    assertEquals(2, downloaded.getJsonArray("transitions").size());
    assertEquals(OPERATOR, downloaded.getJsonArray("transitions").getJsonObject(1).getString("actor"));
    browser.driver.findElement(test("timeline-zone")).click();
    browser.awaitText(test("timeline"), "UTC");
    browser.screenshot("order");
    assertEquals("CANCELLED", status("orders", "order_no = 'OPEN-1'"));
    assertEquals(OPERATOR, app.rows("SELECT actor FROM order_transitions WHERE order_no = 'OPEN-1' AND source = 'OPERATOR'")
        .get(0).getString(0));
    assertEquals(List.of("alice SESSION CANCELLED order OPEN-1"), audit("CLOSE_ORDER"));

    // Reconciliation: run now, read the report.
    go("#/reconcile");
    browser.await(test("run-reconcile")).click();
    browser.awaitText(test("report-summary"), "all invariants hold");
    assertTrue(text(test("report-table")).contains("ONE_EXIT_FROM_PENDING"), text(test("report-table")));
    browser.screenshot("reconcile");
    assertEquals(List.of("alice SESSION OK"), audit("RUN_RECONCILIATION"));

    // The audit log lists all of it.
    go("#/audit");
    browser.awaitText(test("audit-table"), "RUN_RECONCILIATION");
    String log = text(test("audit-table"));
    for (String action : List.of("LOGIN", "RUN_SWEEP", "RESOLVE_EXCEPTION", "RETRY_OUTBOX_EVENT", "CLOSE_ORDER")) {
      assertTrue(log.contains(action), action + " in " + log);
    }
    browser.screenshot("audit");

    // Back on the overview: the sweep run and the reconciliation just made.
    go("#/overview");
    browser.awaitText(test("card-sweep"), "cancelled 1");
    browser.awaitText(test("card-reconcile"), "all invariants hold");
    browser.screenshot("overview");
  }

  @Test
  void aReconciliationViolationLinksToItsOrder() {
    app.createOrder(order("BROKEN-1", "u1", null, "A", 1, 100));
    // A transition the order's status does not follow: STATUS_IS_LAST_TRANSITION must name the order.
    app.pool.query("INSERT INTO order_transitions (order_no, from_status, to_status, source, actor) "
        + "VALUES ('BROKEN-1', 'PENDING_PAYMENT', 'PAID', 'OPERATOR', 'test')").execute().await();
    signIn();
    go("#/reconcile");
    browser.await(test("run-reconcile")).click();
    browser.awaitText(test("report-summary"), "violation(s)");
    assertEquals(List.of("alice SESSION VIOLATIONS"), audit("RUN_RECONCILIATION"));
    browser.await(By.cssSelector("[data-testid='report-table'] [data-testid='order-link']")).click();
    browser.awaitText(test("order-no"), "BROKEN-1");
  }

  @Test
  void theQueuePagesThroughEveryRowOnce() {
    app.pool.query("INSERT INTO exception_orders (order_no, kind, channel, txn_id, amount_cents, status) "
        + "SELECT 'P' || g, 'UNKNOWN_ORDER', 'sandbox', 'TP' || g, g, 'MANUAL_REVIEW' FROM generate_series(1, 23) g")
        .execute().await();
    signIn();
    go("#/exceptions?limit=10");
    Set<String> seen = new HashSet<>();
    List<Integer> sizes = new ArrayList<>();
    for (int page = 1; ; page++) {
      browser.awaitText(test("page-no"), "page " + page);
      List<WebElement> links = browser.driver.findElements(test("exception-link"));
      sizes.add(links.size());
      links.forEach(l -> assertTrue(seen.add(l.getText()), "seen twice: " + l.getText()));
      WebElement next = browser.driver.findElement(test("next-page"));
      if (!next.isEnabled()) {
        break;
      }
      next.click();
    }
    assertEquals(List.of(10, 10, 3), sizes);
    assertEquals(23, seen.size());
    browser.driver.findElement(test("prev-page")).click();
    browser.awaitText(test("page-no"), "page 2");
  }

  @Test
  void markupInStoredValuesIsShownAsTextAndNeverRuns() {
    String script = "<script>window.__xss='script'</script>";
    String img = "\"><img src=x onerror=\"window.__xss='img'\">";
    long id = latePayment("XSS-1", "T-XSS", 50_000);
    expect(app.call(HttpMethod.POST, "/admin/exceptions/" + id + "/resolve", new JsonObject()
        .put("operator", "ops" + img).put("resolution", "DISMISSED").put("note", script + img), true), 200);
    app.createOrder(order("XSS-2", "u1", null, "A", 1, 100));
    expect(app.call(HttpMethod.POST, "/admin/orders/XSS-2/cancel", new JsonObject()
        .put("operator", "cron").put("reason", img + script), true), 200);
    // A sign-in attempt with markup for a name reaches the audit log.
    expect(app.http.post("/admin/login").putHeader("Content-Type", "application/json")
        .sendBuffer(io.vertx.core.buffer.Buffer.buffer(new JsonObject().put("name", img).put("password", "x").encode()))
        .await(), 401);

    // And through a verified gateway payload: an extra field of a late payment's notification.
    app.createOrder(order("XSS-3", "u1", null, "A", 1, 50_000));
    expect(app.call(HttpMethod.POST, "/api/orders/XSS-3/cancel", null, false), 200);
    app.callback(payment("T-XSS-3", "XSS-3", 50_000).put("memo", script + img));
    long fromPayload = app.rows("SELECT id FROM exception_orders WHERE txn_id = 'T-XSS-3'").get(0).getLong(0);

    signIn();
    go("#/exceptions/" + fromPayload);
    browser.awaitText(test("gateway-payload"), "\"memo\": \"" + script);
    browser.script("document.querySelector(\"[data-testid='gateway']\").scrollIntoView()");
    browser.screenshot("xss-payload");
    assertEquals(0L, browser.script("return document.querySelectorAll('#view img, #view script').length"));
    go("#/order/XSS-3");
    browser.awaitText(test("notifications-table"), "T-XSS-3");
    go("#/exceptions/" + id);
    browser.awaitText(test("exception-note"), script + img);
    assertTrue(text(test("history-table")).contains("ops" + img));
    go("#/order/XSS-2");
    browser.awaitText(test("timeline"), img + script);
    go("#/audit");
    browser.awaitText(test("audit-table"), img);
    browser.screenshot("xss-as-text");
    assertEquals(0L, browser.script("return document.querySelectorAll('#view img, #view script').length"));
  }
}
