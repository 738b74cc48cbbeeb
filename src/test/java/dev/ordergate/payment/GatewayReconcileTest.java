package dev.ordergate.payment;

import dev.ordergate.reconcile.GatewayCheck;
import dev.ordergate.reconcile.GatewayFinding;
import dev.ordergate.reconcile.GatewayReport;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reconciliation against the gateways' bills (issue 10), for WeChat Pay, Alipay and Stripe, against the
 * simulator (real trade state, real bill formats: WeChat Pay's signed tradebill answer and SHA1-checked CSV,
 * Alipay's signed bill URL and GBK zip, Stripe's paged lists) on a real PostgreSQL.
 */
class GatewayReconcileTest {

  /** channel, simulator kind, the zone the gateway's days are cut in. */
  private static final Object[][] GATEWAYS = {
      {Sandbox.WECHATPAY, "wechatpay-v3", ZoneOffset.ofHours(8)},
      {Sandbox.ALIPAY, "alipay", ZoneOffset.ofHours(8)},
      {Sandbox.STRIPE, "stripe", ZoneOffset.UTC}};

  private static GatewaySim sim;
  private static TestApp app;
  private static io.vertx.openapi.validation.ResponseValidator contract;

  @BeforeAll
  static void start() throws Exception {
    sim = new GatewaySim();
    contract = io.vertx.openapi.validation.ResponseValidator.create(sim.vertx, io.vertx.openapi.contract.OpenAPIContract.from(
        sim.vertx, new JsonObject(java.nio.file.Files.readString(java.nio.file.Path.of("src/main/resources/openapi.json")))).await());
    app = TestApp.start(sim.serviceConfig(new JsonObject().put("gatewayTimeoutMs", 2000)));
  }

  @AfterAll
  static void stop() {
    app.close();
    sim.close();
  }

  @BeforeEach
  void fresh() {
    sim.clearFaults();
    sim.http.deleteAbs(sim.url() + "/sim/bills").send().await();
    app.truncate();
    app.setStock("A", 1000);
  }

  private static String channel(Object[] g) {
    return (String) g[0];
  }

  private static String kind(Object[] g) {
    return (String) g[1];
  }

  private static LocalDate today(Object[] g) {
    return LocalDate.now((ZoneId) g[2]);
  }

  /** A new order with an open payment at the gateway; answers {orderNo, ref}. */
  private static String[] opened(Object[] g, long cents) {
    String no = "GR" + UUID.randomUUID().toString().substring(0, 8);
    app.createOrder(order(no, "u1", null, "A", 1, cents));
    HttpResponse<Buffer> r = app.call(HttpMethod.POST, "/api/orders/" + no + "/payments",
        new JsonObject().put("channel", channel(g)), false);
    assertEquals(201, r.statusCode(), r.bodyAsString());
    return new String[] {no, r.bodyAsJsonObject().getString("gatewayReference")};
  }

  /** The buyer pays; {@code notify} false: the gateway's notification is lost. Answers the gateway's txn id. */
  private static String paid(Object[] g, String[] trade, boolean notify) {
    JsonObject t = sim.pay(app, kind(g), trade[1], channel(g), notify);
    assertEquals("PAID", t.getString("state"), t.encode());
    if (notify) {
      assertTrue(t.getBoolean("notified"), t.encode());
      assertEquals("PAID", status(trade[0]));
    }
    return t.getString("txnId");
  }

  /** The answer as openapi.json documents operation reconcileGateway. */
  private static HttpResponse<Buffer> conforms(HttpResponse<Buffer> resp) {
    java.util.Map<String, String> headers = new java.util.HashMap<>();
    resp.headers().forEach(h -> headers.put(h.getKey(), h.getValue()));
    contract.validate(io.vertx.openapi.validation.ValidatableResponse.create(resp.statusCode(), headers, resp.body(),
        resp.getHeader("Content-Type")), "reconcileGateway").await();
    return resp;
  }

  private static String status(String orderNo) {
    return app.getOrder(orderNo).getString("status");
  }

  private static GatewayReport reconcile(Object[] g, boolean apply) {
    return app.verticle.gatewayReconciler().run(channel(g), today(g), apply).await();
  }

  private static void inject(Object[] g, String ref, JsonObject spec) {
    var r = sim.http.postAbs(sim.url() + "/sim/bills/" + kind(g) + "/" + ref).sendBuffer(Buffer.buffer(spec.encode())).await();
    assertEquals(200, r.statusCode(), r.bodyAsString());
  }

  @Test
  void aCleanDayReportsNothing() {
    for (Object[] g : GATEWAYS) {
      fresh();
      String[] a = opened(g, 1234);
      String[] b = opened(g, 1);
      paid(g, a, true);
      paid(g, b, true);
      opened(g, 999); // open, never paid: not on the bill, no receipt
      GatewayReport report = reconcile(g, false);
      assertTrue(report.ok(), channel(g) + ": " + report.summary());
      assertEquals(2, report.billPayments(), report.summary());
      assertEquals(2, report.receiptsOfDay(), report.summary());
      assertEquals(0, report.confirmedByQuery(), report.summary());
    }
  }

  @Test
  void aDroppedNotificationIsReportedThenAppliedOnceThroughTheGate() {
    for (Object[] g : GATEWAYS) {
      fresh();
      String[] t = opened(g, 2500);
      String txn = paid(g, t, false);
      assertEquals("PENDING_PAYMENT", status(t[0]));

      GatewayReport dry = reconcile(g, false);
      List<GatewayFinding> missing = dry.of(GatewayCheck.MISSING_RECEIPT);
      assertEquals(1, missing.size(), dry.summary());
      assertEquals(txn, missing.get(0).txnId());
      assertEquals(t[0], missing.get(0).orderNo());
      assertEquals(2500L, missing.get(0).gatewayAmountCents());
      assertNull(missing.get(0).resolution(), "a report-only run changes nothing");
      assertEquals("PENDING_PAYMENT", status(t[0]), "a report-only run changes nothing");

      GatewayReport applied = reconcile(g, true);
      assertEquals("APPLIED", applied.of(GatewayCheck.MISSING_RECEIPT).get(0).resolution(), applied.summary());
      assertEquals("PAID", status(t[0]));
      assertEquals("PAYMENT_QUERY", app.rows("SELECT source FROM order_transitions WHERE order_no = $1 AND "
          + "from_status = 'PENDING_PAYMENT'", t[0]).get(0).getString("source"));

      GatewayReport again = reconcile(g, true);
      assertTrue(again.ok(), again.summary());
      // The late notification, when it lands, is a duplicate of the applied payment: the same key.
      JsonObject late = sim.http.postAbs(sim.url() + "/sim/pay").sendBuffer(Buffer.buffer(new JsonObject()
          .put("kind", kind(g)).put("orderNo", t[0]).put("amountCents", 2500).put("txnId", txn)
          .put("notifyUrl", "http://127.0.0.1:" + app.verticle.port() + "/api/callbacks/" + channel(g)).encode()))
          .await().bodyAsJsonObject();
      assertTrue(late.getBoolean("accepted"), late.encode());
      assertEquals(1, app.count("SELECT count(*) FROM order_transitions WHERE order_no = $1 AND from_status = 'PENDING_PAYMENT'", t[0]));
      assertEquals(1, app.count("SELECT count(*) FROM payment_receipts WHERE order_no = $1", t[0]));
      assertEquals(0, app.count("SELECT count(*) FROM exception_orders WHERE order_no = $1", t[0]),
          "the late notification must be the duplicate of the bill's payment, not a second payment");
    }
  }

  @Test
  void twoApplyingRunsAtOnceApplyTheLostPaymentOnce() {
    for (Object[] g : GATEWAYS) {
      fresh();
      String[] t = opened(g, 700);
      paid(g, t, false);
      List<Future<GatewayReport>> runs = List.of(
          app.verticle.gatewayReconciler().run(channel(g), today(g), true),
          app.verticle.gatewayReconciler().run(channel(g), today(g), true));
      Future.all(runs).await();
      long appliedAnswers = runs.stream().flatMap(f -> f.result().of(GatewayCheck.MISSING_RECEIPT).stream())
          .filter(f -> f.resolution().startsWith("APPLIED") && !f.resolution().contains("duplicate")).count();
      assertEquals(1, appliedAnswers, channel(g) + ": exactly one run applies it, the other gets the duplicate");
      assertEquals(1, app.count("SELECT count(*) FROM order_transitions WHERE order_no = $1 AND from_status = 'PENDING_PAYMENT'", t[0]));
      assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
      assertEquals("PAID", status(t[0]));
    }
  }

  @Test
  void aLostPaymentOfACancelledOrderBecomesAnExceptionNotAPaidOrder() {
    for (Object[] g : GATEWAYS) {
      fresh();
      String[] t = opened(g, 800);
      paid(g, t, false);
      // Cancelled on our side without asking the gateway (as before issue 10): the money is there anyway.
      app.pool.preparedQuery("DELETE FROM payment_attempts WHERE order_no = $1").execute(io.vertx.sqlclient.Tuple.of(t[0])).await();
      assertEquals(200, app.call(HttpMethod.POST, "/api/orders/" + t[0] + "/cancel", null, false).statusCode());
      GatewayReport applied = reconcile(g, true);
      assertEquals("LATE_AFTER_CANCEL", applied.of(GatewayCheck.MISSING_RECEIPT).get(0).resolution(), applied.summary());
      assertEquals("CANCELLED", status(t[0]));
      assertEquals(1, app.count("SELECT count(*) FROM exception_orders WHERE order_no = $1 AND kind = 'LATE_AFTER_CANCEL'", t[0]));
      // The exception is refunded automatically (below the threshold) through the gateway: once that
      // refund settled on both sides, the day is clean.
      assertTrue(dev.ordergate.sweep.SweepFixtures.eventually(java.time.Duration.ofSeconds(30), () -> app.count(
          "SELECT count(*) FROM exception_orders WHERE order_no = $1 AND status = 'REFUNDED'", t[0]) == 1),
          "the late payment's refund settled");
      GatewayReport after = reconcile(g, true);
      assertTrue(after.ok(), channel(g) + ": " + after.summary());
    }
  }

  @Test
  void eachInjectedMismatchIsFlagged() {
    for (Object[] g : GATEWAYS) {
      fresh();
      // 1. billed with another amount than our receipt says
      String[] differs = opened(g, 1000);
      String differsTxn = paid(g, differs, true);
      inject(g, differs[1], new JsonObject().put("amountCents", 1001));
      // 2. a receipt here that the gateway never had (a forged or misrouted notification that verified)
      String ghost = "GR" + UUID.randomUUID().toString().substring(0, 8);
      app.createOrder(order(ghost, "u1", null, "A", 1, 300));
      String ghostTxn = kind(g).equals("stripe") ? "pi_simghost" + ghost : kind(g).equals("alipay")
          ? "2026120122001" + Math.abs(ghost.hashCode()) : "4200000" + Math.abs(ghost.hashCode());
      JsonObject sent = sim.http.postAbs(sim.url() + "/sim/pay").sendBuffer(Buffer.buffer(new JsonObject()
          .put("kind", kind(g)).put("orderNo", ghost).put("amountCents", 300).put("txnId", ghostTxn)
          .put("notifyUrl", "http://127.0.0.1:" + app.verticle.port() + "/api/callbacks/" + channel(g)).encode()))
          .await().bodyAsJsonObject();
      assertTrue(sent.getBoolean("accepted"), sent.encode());
      assertEquals("PAID", status(ghost));
      // 3. refunded at the gateway, not here
      String[] refunded = opened(g, 450);
      String refundedTxn = paid(g, refunded, true);
      inject(g, refunded[1], new JsonObject().put("refund", new JsonObject().put("amountCents", 450)));
      // 4. a paid trade the day's bill leaves off (billed another day): the query confirms it, no finding
      String[] offBill = opened(g, 600);
      paid(g, offBill, true);
      inject(g, offBill[1], new JsonObject().put("omit", true));

      GatewayReport report = reconcile(g, false);
      String why = channel(g) + ": " + report.summary();
      assertEquals(3, report.findings().size(), why);
      assertEquals(differsTxn, report.of(GatewayCheck.AMOUNT_DIFFERS).get(0).txnId(), why);
      assertEquals(1001L, report.of(GatewayCheck.AMOUNT_DIFFERS).get(0).gatewayAmountCents(), why);
      assertEquals(1000L, report.of(GatewayCheck.AMOUNT_DIFFERS).get(0).ourAmountCents(), why);
      assertEquals(ghostTxn, report.of(GatewayCheck.NOT_PAID_AT_GATEWAY).get(0).txnId(), why);
      assertEquals(refundedTxn, report.of(GatewayCheck.REFUND_NOT_HERE).get(0).txnId(), why);
      assertEquals(450L, report.of(GatewayCheck.REFUND_NOT_HERE).get(0).gatewayAmountCents(), why);
      assertEquals(1, report.confirmedByQuery(), why);
      assertEquals(4, report.receiptsOfDay(), why);
    }
  }

  @Test
  void theAdminRouteAnswersTheReportAndRefusesBadInput() {
    Object[] g = GATEWAYS[0];
    String[] t = opened(g, 1500);
    paid(g, t, false);
    HttpResponse<Buffer> ok = conforms(app.call(HttpMethod.GET, "/admin/reconcile/gateway?channel=" + channel(g) + "&date="
        + today(g), null, true));
    assertEquals(200, ok.statusCode(), ok.bodyAsString());
    JsonObject body = ok.bodyAsJsonObject();
    assertEquals(false, body.getBoolean("ok"));
    assertEquals(1, body.getInteger("findings"));
    assertEquals("PENDING_PAYMENT", status(t[0]), "the route reports, it never applies");
    assertEquals(401, app.call(HttpMethod.GET, "/admin/reconcile/gateway?channel=" + channel(g) + "&date=" + today(g),
        null, false).statusCode());
    String c = "?channel=" + channel(g);
    for (String q : new String[] {"", "?date=2026-12-01", c, c + "&date=2026-13-01", c + "&date=yesterday",
        c + "&date=" + today(g) + "&apply=true", "?channel=nope&date=2026-12-01",
        "?channel=" + TestApp.CHANNEL + "&date=2026-12-01"}) {
      HttpResponse<Buffer> bad = conforms(app.call(HttpMethod.GET, "/admin/reconcile/gateway" + q, null, true));
      assertEquals(400, bad.statusCode(), q + ": " + bad.bodyAsString());
      assertTrue(bad.bodyAsJsonObject().getString("error") != null, bad.bodyAsString());
    }
    // the gateway down: 503 with a clear error, never 500
    for (Object[] each : GATEWAYS) {
      sim.fault(kind(each), new JsonObject().put("status", 503).put("ops", new io.vertx.core.json.JsonArray().add("bill")));
      HttpResponse<Buffer> down = conforms(app.call(HttpMethod.GET, "/admin/reconcile/gateway?channel=" + channel(each)
          + "&date=" + today(each), null, true));
      assertEquals(503, down.statusCode(), down.bodyAsString());
      assertEquals("GATEWAY_UNAVAILABLE", down.bodyAsJsonObject().getString("error"));
      assertEquals("1", down.getHeader("Retry-After"));
    }
  }

  @Test
  void theCommandExitsOneOnFindingsAppliesWithApplyAndTwoWhenTheGatewayIsDown(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws Exception {
    java.nio.file.Path conf = dir.resolve("config.json");
    java.nio.file.Files.writeString(conf, sim.serviceConfig(new JsonObject()).encodePrettily());
    java.nio.file.Path out = dir.resolve("report.json");
    for (Object[] g : GATEWAYS) {
      fresh();
      String[] t = opened(g, 4200);
      paid(g, t, false);
      String[] base = {"--gateway", channel(g), "--date", today(g).toString(), "--db-url", app.db.uri(),
          "--config", conf.toString(), "--report", out.toString()};
      assertEquals(1, dev.ordergate.tools.Tools.run("reconcile", base), channel(g));
      assertEquals("PENDING_PAYMENT", status(t[0]));
      JsonObject report = new JsonObject(java.nio.file.Files.readString(out));
      assertEquals(1, report.getInteger("findings"), report.encode());
      assertEquals(1, dev.ordergate.tools.Tools.run("reconcile", concat(base, "--apply")), "found and applied");
      assertEquals("PAID", status(t[0]));
      assertEquals(0, dev.ordergate.tools.Tools.run("reconcile", concat(base, "--apply")), "the next run is clean");
      String[] viaService = {"--gateway", channel(g), "--date", today(g).toString(),
          "--url", "http://127.0.0.1:" + app.verticle.port(), "--admin-token", TestApp.ADMIN_TOKEN};
      assertEquals(0, dev.ordergate.tools.Tools.run("reconcile", viaService));
      sim.fault(kind(g), new JsonObject().put("status", 500).put("ops", new io.vertx.core.json.JsonArray().add("bill")));
      assertEquals(2, dev.ordergate.tools.Tools.run("reconcile", base), "the gateway answers 5xx: could not run");
      assertEquals(2, dev.ordergate.tools.Tools.run("reconcile", viaService), "the same through the service (503)");
      sim.clearFaults();
    }
    assertEquals(2, dev.ordergate.tools.Tools.run("reconcile", new String[] {"--gateway", Sandbox.WECHATPAY, "--date", "12/01/2026"}));
    assertEquals(2, dev.ordergate.tools.Tools.run("reconcile", new String[] {"--gateway", "nope", "--date", "2026-12-01",
        "--db-url", app.db.uri(), "--config", conf.toString()}));
    assertEquals(2, dev.ordergate.tools.Tools.run("reconcile", new String[] {"--gateway", Sandbox.WECHATPAY, "--date",
        "2026-12-01", "--url", "http://127.0.0.1:1", "--apply"}));
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void aRefundMadeThroughTheGatewayReconcilesAndRefundsOnOneSideOnlyAreFlagged() {
    for (Object[] g : GATEWAYS) {
      fresh();
      // A late payment: cancelled here (no attempt to close), paid there, refunded automatically at the gateway.
      String[] late = opened(g, 500);
      app.pool.preparedQuery("DELETE FROM payment_attempts WHERE order_no = $1").execute(io.vertx.sqlclient.Tuple.of(late[0])).await();
      assertEquals(200, app.call(HttpMethod.POST, "/api/orders/" + late[0] + "/cancel", null, false).statusCode());
      String lateTxn = sim.pay(app, kind(g), late[1], channel(g), true).getString("txnId");
      assertTrue(dev.ordergate.sweep.SweepFixtures.eventually(java.time.Duration.ofSeconds(30), () -> "REFUNDED".equals(
          app.rows("SELECT status FROM exception_orders WHERE order_no = $1", late[0]).get(0).getString("status"))),
          channel(g) + ": the late payment is refunded at the gateway");
      GatewayReport clean = reconcile(g, false);
      assertTrue(clean.ok(), channel(g) + ": " + clean.summary());
      assertEquals(1, clean.billRefunds(), clean.summary());

      // REFUNDED here (e.g. refunded by hand through refundUrl) but never at the gateway.
      String[] other = opened(g, 300);
      String otherTxn = paid(g, other, true);
      app.pool.query("INSERT INTO exception_orders (order_no, kind, channel, txn_id, amount_cents, status) VALUES ('"
          + other[0] + "', 'DOUBLE_PAYMENT', '" + channel(g) + "', '" + otherTxn + "-2', 300, 'REFUNDED')").execute().await();
      app.pool.query("INSERT INTO exception_history (exception_id, event, from_status, to_status, actor) SELECT id, "
          + "'REFUND_CONFIRMED', 'REFUND_PENDING', 'REFUNDED', 'test' FROM exception_orders WHERE txn_id = '" + otherTxn + "-2'")
          .execute().await();
      GatewayReport report = reconcile(g, false);
      assertEquals(1, report.findings().size(), report.summary());
      assertEquals(otherTxn + "-2", report.of(GatewayCheck.REFUND_NOT_AT_GATEWAY).get(0).txnId(), report.summary());
      assertTrue(report.of(GatewayCheck.REFUND_NOT_HERE).isEmpty(), lateTxn);
    }
  }
}
