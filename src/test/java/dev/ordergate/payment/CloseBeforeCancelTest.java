package dev.ordergate.payment;

import dev.ordergate.domain.CancelOutcome;
import dev.ordergate.domain.CancelResult;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancelGate;
import dev.ordergate.gate.CancellationEffects;
import dev.ordergate.metrics.Metrics;
import dev.ordergate.outbox.OutboxWriter;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;


import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payment attempts and close before cancel against the gateway simulator (WeChat Pay v3, Alipay, Stripe
 * wire formats, real per-trade state) on a real PostgreSQL.
 */
class CloseBeforeCancelTest {

  /** channel -> simulator kind. */
  private static final String[][] GATEWAYS = {
      {Sandbox.WECHATPAY, "wechatpay-v3"}, {Sandbox.ALIPAY, "alipay"}, {Sandbox.STRIPE, "stripe"}};

  private static GatewaySim sim;
  private static TestApp app;
  private static Contract contract;

  @BeforeAll
  static void start() throws Exception {
    sim = new GatewaySim();
    contract = new Contract(sim.vertx);
    app = TestApp.start(sim.serviceConfig(new JsonObject().put("closeDeferMaxSeconds", 2).put("gatewayTimeoutMs", 700)
        .put("gatewayConcurrency", 2)));
  }

  @AfterAll
  static void stop() {
    app.close();
    sim.close();
  }

  @BeforeEach
  void fresh() {
    sim.clearFaults();
    app.truncate();
    app.setStock("A", 1000);
  }

  private static String newOrder(long cents) {
    String no = "CB" + UUID.randomUUID().toString().substring(0, 8);
    app.createOrder(order(no, "u1", null, "A", 1, cents));
    return no;
  }

  private static HttpResponse<Buffer> open(String orderNo, String channel) {
    return conforms("openPayment",
        app.call(HttpMethod.POST, "/api/orders/" + orderNo + "/payments", new JsonObject().put("channel", channel), false));
  }

  /** The answer as openapi.json documents operation {@code operationId} (vertx-openapi's validator). */
  private static HttpResponse<Buffer> conforms(String operationId, HttpResponse<Buffer> resp) {
    return contract.conforms(operationId, resp);
  }

  private static JsonObject opened(String orderNo, String channel) {
    HttpResponse<Buffer> r = open(orderNo, channel);
    assertTrue(r.statusCode() == 201 || r.statusCode() == 200, r.bodyAsString());
    return r.bodyAsJsonObject();
  }

  private static void expire(String orderNo) {
    app.pool.preparedQuery("UPDATE orders SET expires_at = now() - interval '1 second' WHERE order_no = $1")
        .execute(io.vertx.sqlclient.Tuple.of(orderNo)).await();
  }

  private static void sweep() {
    app.verticle.sweeper().runNow().await();
  }

  private static String status(String orderNo) {
    return app.getOrder(orderNo).getString("status");
  }

  private static String attemptState(String orderNo, String channel) {
    return app.rows("SELECT state FROM payment_attempts WHERE order_no = $1 AND channel = $2", orderNo, channel)
        .get(0).getString("state");
  }

  private static String exitSource(String orderNo) {
    return app.rows("SELECT source FROM order_transitions WHERE order_no = $1 AND from_status = 'PENDING_PAYMENT'",
        orderNo).get(0).getString("source");
  }

  private static String ref(String kind, JsonObject attempt) {
    return attempt.getString("gatewayReference");
  }

  @Test
  void attemptsAreIdempotentPerOrderAndChannelAndCarryTheOrderDeadline() {
    String no = newOrder(1234);
    Instant expiresAt = Instant.parse(app.getOrder(no).getString("expiresAt"));
    for (String[] g : GATEWAYS) {
      List<Future<HttpResponse<Buffer>>> parallel = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        parallel.add(app.callAsync(HttpMethod.POST, "/api/orders/" + no + "/payments", new JsonObject().put("channel", g[0]), false));
      }
      Future.all(parallel).await();
      Set<Long> ids = new HashSet<>();
      Set<String> clientValues = new HashSet<>();
      int created = 0;
      String field = switch (g[1]) {
        case "wechatpay-v3" -> "code_url";
        case "alipay" -> "qr_code";
        default -> "client_secret";
      };
      for (var f : parallel) {
        HttpResponse<Buffer> r = f.result();
        assertTrue(r.statusCode() == 201 || r.statusCode() == 200, r.bodyAsString());
        created += r.statusCode() == 201 ? 1 : 0;
        ids.add(r.bodyAsJsonObject().getLong("attemptId"));
        clientValues.add(r.bodyAsJsonObject().getString(field));
      }
      JsonObject again = opened(no, g[0]);
      assertTrue(again.getBoolean("replayed"));
      ids.add(again.getLong("attemptId"));
      clientValues.add(again.getString(field));
      assertEquals(1, created, g[0] + ": exactly one request created the attempt");
      assertEquals(1, ids.size(), g[0] + ": one attempt per (order, channel)");
      assertEquals(1, clientValues.size(), g[0] + ": the same " + field + " every time");
      assertEquals(1, app.count("SELECT count(*) FROM payment_attempts WHERE order_no = $1 AND channel = $2", no, g[0]));
      JsonObject trade = sim.trade(g[1], ref(g[1], again));
      assertNotNull(trade, g[0]);
      assertEquals(1234, trade.getLong("amountCents"));
      if (g[1].equals("stripe")) {
        assertNull(trade.getString("deadline"), "a PaymentIntent has no deadline: we cancel it at timeout");
        assertTrue(clientValues.iterator().next().startsWith(again.getString("gatewayReference") + "_secret_"));
      } else {
        assertEquals(expiresAt.getEpochSecond(), Instant.parse(trade.getString("deadline")).getEpochSecond(),
            g[0] + ": the gateway's own deadline is the order's expiry");
      }
    }
    JsonObject listed = TestApp.expect(conforms("listPayments",
        app.call(HttpMethod.GET, "/api/orders/" + no + "/payments", null, false)), 200).bodyAsJsonObject();
    JsonArray attempts = listed.getJsonArray("attempts");
    assertEquals(3, attempts.size());
    for (Object o : attempts) {
      JsonObject a = (JsonObject) o;
      assertEquals("OPEN", a.getString("state"));
      assertNull(a.getString("client_secret"), "the listing does not repeat client secrets");
    }
  }

  @Test
  void openingIsRefusedClearlyAndNeedsTheApiKey() {
    String no = newOrder(500);
    assertEquals(400, open(no, "nope").statusCode());
    assertEquals("UNKNOWN_CHANNEL", open(no, "nope").bodyAsJsonObject().getString("error"));
    assertEquals("CHANNEL_CANNOT_OPEN", open(no, TestApp.CHANNEL).bodyAsJsonObject().getString("error"));
    HttpResponse<Buffer> missing = app.call(HttpMethod.POST, "/api/orders/" + no + "/payments", new JsonObject(), false);
    assertEquals(400, missing.statusCode());
    assertEquals("VALIDATION_FAILED", missing.bodyAsJsonObject().getString("error"));
    assertEquals(404, open("NO-SUCH-ORDER", Sandbox.WECHATPAY).statusCode());
    var anonymous = app.http.post("/api/orders/" + no + "/payments")
        .sendBuffer(Buffer.buffer(new JsonObject().put("channel", Sandbox.WECHATPAY).encode())).await();
    assertEquals(401, anonymous.statusCode());
    TestApp.expect(app.call(HttpMethod.POST, "/api/orders/" + no + "/cancel", new JsonObject(), false), 200);
    HttpResponse<Buffer> cancelled = open(no, Sandbox.WECHATPAY);
    assertEquals(409, cancelled.statusCode());
    assertEquals("ORDER_NOT_PENDING", cancelled.bodyAsJsonObject().getString("error"));
    String late = newOrder(500);
    expire(late);
    assertEquals("ORDER_EXPIRED", open(late, Sandbox.ALIPAY).bodyAsJsonObject().getString("error"));
    assertEquals(0, app.count("SELECT count(*) FROM payment_attempts"));
  }

  @Test
  void aGatewayErrorIs502WithItsCodeAndNothingIsStored() {
    String no = newOrder(700);
    // The gateway already knows this out_trade_no with another amount: WeChat Pay refuses with its own code.
    sim.apis.trades().create("wechatpay-v3", no, no, 1, "CNY", null, null, "weixin://x", dev.ordergate.sim.TradeBook.State.OPEN);
    HttpResponse<Buffer> r = open(no, Sandbox.WECHATPAY);
    assertEquals(502, r.statusCode(), r.bodyAsString());
    assertEquals("GATEWAY_ERROR", r.bodyAsJsonObject().getString("error"));
    assertEquals("INVALID_REQUEST", r.bodyAsJsonObject().getString("gatewayCode"));
    sim.fault("stripe", new JsonObject().put("status", 503).put("ops", new JsonArray().add("open")));
    HttpResponse<Buffer> down = open(no, Sandbox.STRIPE);
    assertEquals(503, down.statusCode(), down.bodyAsString());
    assertEquals("GATEWAY_UNAVAILABLE", down.bodyAsJsonObject().getString("error"));
    assertEquals("HTTP_503", down.bodyAsJsonObject().getString("gatewayCode"));
    assertEquals(0, app.count("SELECT count(*) FROM payment_attempts"), "nothing half-made");
    assertTrue(app.metric("ordergate_gateway_calls_total", "channel", Sandbox.STRIPE, "op", "open", "result", "unreachable") >= 1);
    assertTrue(app.metric("ordergate_gateway_calls_total", "channel", Sandbox.WECHATPAY, "op", "open", "result", "gateway_error") >= 1);
    sim.clearFaults();
    assertEquals(201, open(no, Sandbox.STRIPE).statusCode(), "a retry opens the payment once the gateway is back");
  }

  @Test
  void paidAtTheGatewayIsAppliedByTheQueryAndTheLateNotificationIsADuplicate() {
    for (String[] g : GATEWAYS) {
      String no = newOrder(990);
      JsonObject attempt = opened(no, g[0]);
      JsonObject paid = sim.pay(app, g[1], ref(g[1], attempt), g[0], false);
      assertEquals(200, paid.getInteger("httpStatus"), paid.encode());
      expire(no);
      sweep();
      assertEquals("PAID", status(no), g[0] + ": the sweep found the payment by querying, so it did not cancel");
      assertEquals("PAYMENT_QUERY", exitSource(no));
      assertEquals("PAID", attemptState(no, g[0]));
      JsonObject late = sim.pay(app, g[1], ref(g[1], attempt), g[0], true);
      assertTrue(late.getJsonObject("report").getBoolean("accepted"), late.encode());
      assertEquals(1, app.count("SELECT count(*) FROM payment_receipts WHERE order_no = $1", no), "one key: (channel, txn id)");
      assertEquals(0, app.count("SELECT count(*) FROM exception_orders WHERE order_no = $1", no), "the notification was a duplicate");
    }
  }

  @Test
  void closedAtTheGatewayIsCancelledAndCanNoLongerBePaid() {
    for (String[] g : GATEWAYS) {
      String no = newOrder(310);
      JsonObject attempt = opened(no, g[0]);
      if (g[1].equals("alipay")) {
        sim.scan("alipay", no);
      }
      expire(no);
      sweep();
      assertEquals("CANCELLED", status(no), g[0]);
      assertEquals("TIMEOUT_SWEEP", exitSource(no));
      assertEquals("CLOSED", attemptState(no, g[0]));
      assertEquals("CLOSED", sim.trade(g[1], ref(g[1], attempt)).getString("state"), g[0] + ": closed at the gateway");
      assertEquals(409, sim.pay(app, g[1], ref(g[1], attempt), g[0], true).getInteger("httpStatus"),
          g[0] + ": the customer can no longer pay");
    }
    // The customer's cancel closes too: a Stripe PaymentIntent is cancelled before the order.
    String no = newOrder(420);
    JsonObject attempt = opened(no, Sandbox.STRIPE);
    JsonObject answer = TestApp.expect(app.call(HttpMethod.POST, "/api/orders/" + no + "/cancel", new JsonObject(), false), 200)
        .bodyAsJsonObject();
    assertEquals("CANCELLED", answer.getString("outcome"));
    assertEquals("CLOSED", sim.trade("stripe", attempt.getString("gatewayReference")).getString("state"));
  }

  @Test
  void alipayBeforeTheScanIsUnknownAndTheLatePaymentBecomesAnExceptionNotLostMoney() {
    String no = newOrder(880);
    opened(no, Sandbox.ALIPAY);
    expire(no);
    sweep();
    assertEquals("CANCELLED", status(no), "ACQ.TRADE_NOT_EXIST: unknown to the gateway, cancelled as today");
    assertEquals("CLOSED", attemptState(no, Sandbox.ALIPAY));
    // The trap: the QR code stays payable until its time_expire (here still ahead: we moved only our expiry).
    JsonObject paid = sim.pay(app, "alipay", no, Sandbox.ALIPAY, true);
    assertEquals(200, paid.getInteger("httpStatus"), paid.encode());
    assertEquals("LATE_AFTER_CANCEL", app.rows("SELECT kind FROM exception_orders WHERE order_no = $1", no)
        .get(0).getString("kind"));
  }

  @Test
  void theGatewayEnforcesTheDeadlineSetAtOpen() throws Exception {
    String no = "DL" + UUID.randomUUID().toString().substring(0, 8);
    app.createOrder(order(no, "u1", null, "A", 1, 100).put("paymentTimeoutSeconds", 2));
    opened(no, Sandbox.WECHATPAY);
    opened(no, Sandbox.ALIPAY);
    Thread.sleep(2_300);
    assertEquals("NOT_PAYABLE", sim.pay(app, "wechatpay-v3", no, Sandbox.WECHATPAY, true).getString("error"));
    assertEquals("NOT_PAYABLE", sim.pay(app, "alipay", no, Sandbox.ALIPAY, true).getString("error"));
    sweep();
    assertEquals("CANCELLED", status(no));
  }

  @Test
  void anUnreachableGatewayDefersTheCancelThenCancelsAfterTheMaximum() throws Exception {
    String down = newOrder(200);
    String hung = newOrder(300);
    opened(down, Sandbox.WECHATPAY);
    opened(hung, Sandbox.ALIPAY);
    sim.scan("alipay", hung);
    sim.fault("wechatpay-v3", new JsonObject().put("status", 503).put("ops", new JsonArray().add("close").add("query")));
    sim.fault("alipay", new JsonObject().put("hang", true).put("ops", new JsonArray().add("close").add("query")));
    expire(down);
    expire(hung);
    double deferredBefore = app.metric("ordergate_cancel_deferred_total", "result", "deferred");
    sweep();
    assertEquals("PENDING_PAYMENT", status(down), "required: no cancel while the trade may still be payable");
    assertEquals("PENDING_PAYMENT", status(hung), "a timeout is no answer either");
    assertEquals(2, app.metric("ordergate_cancel_deferred_total", "result", "deferred") - deferredBefore);
    HttpResponse<Buffer> customer = conforms("cancelOrder",
        app.call(HttpMethod.POST, "/api/orders/" + down + "/cancel", new JsonObject(), false));
    assertEquals(503, customer.statusCode(), customer.bodyAsString());
    assertEquals("GATEWAY_UNAVAILABLE", customer.bodyAsJsonObject().getString("error"));
    assertEquals("PENDING_PAYMENT", status(down));
    assertTrue(app.metric("ordergate_gateway_calls_total", "channel", Sandbox.ALIPAY, "op", "close", "result", "unreachable") >= 1);
    Thread.sleep(2_100);
    sweep();
    assertEquals("CANCELLED", status(down), "cancelled anyway after payments.closeDeferMaxSeconds");
    assertEquals("CANCELLED", status(hung));
    assertEquals("UNCLOSED", attemptState(down, Sandbox.WECHATPAY));
    assertEquals("UNCLOSED", attemptState(hung, Sandbox.ALIPAY));
    assertEquals(2, app.metric("ordergate_cancel_deferred_total", "result", "forced"));
    assertTrue(app.rows("SELECT close_failures FROM payment_attempts WHERE order_no = $1", down).get(0)
        .getInteger("close_failures") >= 2);
  }

  @Test
  void bestEffortCancelsAtOnceWhenTheGatewayIsDown() {
    try (TestApp lenient = TestApp.start(sim.serviceConfig(new JsonObject().put("closeBeforeCancel", "bestEffort")
        .put("gatewayTimeoutMs", 700)))) {
      lenient.setStock("A", 10);
      String no = "BE" + UUID.randomUUID().toString().substring(0, 8);
      lenient.createOrder(order(no, "u1", null, "A", 1, 100));
      assertEquals(201, lenient.call(HttpMethod.POST, "/api/orders/" + no + "/payments",
          new JsonObject().put("channel", Sandbox.WECHATPAY), false).statusCode());
      sim.fault("wechatpay-v3", new JsonObject().put("status", 500).put("ops", new JsonArray().add("close").add("query")));
      JsonObject answer = TestApp.expect(lenient.call(HttpMethod.POST, "/api/orders/" + no + "/cancel", new JsonObject(), false), 200)
          .bodyAsJsonObject();
      assertEquals("CANCELLED", answer.getString("outcome"));
      assertEquals("UNCLOSED", lenient.rows("SELECT state FROM payment_attempts WHERE order_no = $1", no).get(0).getString("state"));
    }
  }

  /**
   * The notification lands while the close is in flight (the simulator holds the close 450 ms): it
   * reaches the gate first and wins; the cancel answers ALREADY_PAID and no money is kept on a cancelled
   * order. The same race against a cancel that skips close-before-cancel (a broken twin) takes the money
   * on a cancelled order, which this check detects.
   */
  @Test
  void aNotificationDuringTheCloseWinsAndTheBrokenTwinIsCaught() throws Exception {
    assertEquals(0, moneyOnCancelledOrders(race(null)), "with close before cancel");
    CancelGate broken = new CancelGate(app.pool, new CancellationEffects(new OutboxWriter(app.verticle.outboxSignal())),
        new Metrics(app.registry));
    assertEquals(1, moneyOnCancelledOrders(race(broken)), "the twin without close before cancel must be caught");
  }

  private static String race(CancelGate broken) throws Exception {
    String no = newOrder(660);
    opened(no, Sandbox.WECHATPAY);
    sim.fault("wechatpay-v3", new JsonObject().put("latencyMs", 450).put("ops", new JsonArray().add("close")));
    Future<?> cancel = broken == null
        ? app.callAsync(HttpMethod.POST, "/api/orders/" + no + "/cancel", new JsonObject(), false)
        : broken.cancel(no, TransitionSource.USER, "customer", null);
    Thread.sleep(150);
    JsonObject paid = sim.pay(app, "wechatpay-v3", no, Sandbox.WECHATPAY, true);
    Object answer = cancel.toCompletionStage().toCompletableFuture().get();
    sim.clearFaults();
    if (broken == null) {
      assertEquals(200, paid.getInteger("httpStatus"), paid.encode());
      @SuppressWarnings("unchecked")
      HttpResponse<Buffer> resp = (HttpResponse<Buffer>) answer;
      assertEquals(409, resp.statusCode(), resp.bodyAsString());
      assertEquals("ALREADY_PAID", resp.bodyAsJsonObject().getString("error"));
      assertEquals("PAYMENT_CALLBACK", exitSource(no), "the notification reached the gate first");
    } else {
      assertEquals(CancelOutcome.CANCELLED, ((CancelResult) answer).outcome());
    }
    return no;
  }

  /** Payments taken at the gateway on an order that ended CANCELLED (they become exception orders). */
  private static long moneyOnCancelledOrders(String orderNo) {
    return app.count("SELECT count(*) FROM exception_orders e JOIN orders o ON o.order_no = e.order_no "
        + "WHERE o.order_no = $1 AND o.status = 'CANCELLED'", orderNo);
  }

  /** The sweep's close pass calls each gateway in parallel, never more than payments.gatewayConcurrency (2) at once. */
  @Test
  void theSweepClosesInBoundedParallelPerGateway() {
    List<String> orders = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      String no = newOrder(100 + i);
      opened(no, Sandbox.WECHATPAY);
      opened(no, Sandbox.STRIPE);
      orders.add(no);
    }
    sim.clearFaults();
    sim.fault("wechatpay-v3", new JsonObject().put("latencyMs", 150));
    sim.fault("stripe", new JsonObject().put("latencyMs", 150));
    orders.forEach(CloseBeforeCancelTest::expire);
    sweep();
    for (String no : orders) {
      assertEquals("CANCELLED", status(no));
    }
    for (String kind : new String[] {"wechatpay-v3", "stripe"}) {
      JsonObject stats = sim.stats(kind);
      assertEquals(12, stats.getInteger("calls"), kind + ": a close and a query per attempt");
      assertEquals(2, stats.getInteger("maxInFlight"), kind + ": in parallel, bounded by gatewayConcurrency");
    }
  }

  /** The broker tier's batch of expiry cancellations closes first too: paid ones lose, deferred ones wait. */
  @Test
  void expiryCancellationsInABatchCloseFirst() {
    String paid = newOrder(111);
    String down = newOrder(222);
    String plain = newOrder(333);
    JsonObject attempt = opened(paid, Sandbox.STRIPE);
    opened(down, Sandbox.WECHATPAY);
    sim.pay(app, "stripe", attempt.getString("gatewayReference"), Sandbox.STRIPE, false);
    sim.fault("wechatpay-v3", new JsonObject().put("status", 502).put("ops", new JsonArray().add("close").add("query")));
    List.of(paid, down, plain).forEach(CloseBeforeCancelTest::expire);
    var config = dev.ordergate.config.AppConfig.from(sim.serviceConfig(new JsonObject()));
    CloseBeforeCancel guard = new CloseBeforeCancel(app.pool, dev.ordergate.channel.GatewayClients.all(config.channels(),
        new dev.ordergate.channel.Outbound(io.vertx.ext.web.client.WebClient.create(app.vertx), 2_000, app.registry),
        java.time.Clock.systemUTC()), app.verticle.paymentGate(), config.gatewayOps(), app.registry);
    CancelGate gate = new CancelGate(app.pool, new CancellationEffects(new OutboxWriter(app.verticle.outboxSignal())),
        new Metrics(app.registry), dev.ordergate.gate.GateHook.NONE, guard);
    var result = gate.cancelExpired(List.of(paid, down, plain), TransitionSource.TIMEOUT_MESSAGE, "broker", null).await();
    assertEquals(dev.ordergate.domain.ExpiryCancel.Kind.CLOSED, result.get(paid).kind(), "paid at the gateway: the query applied it");
    assertEquals("PAID", status(paid));
    assertEquals("PAYMENT_QUERY", exitSource(paid));
    assertEquals(dev.ordergate.domain.ExpiryCancel.Kind.NOT_DUE, result.get(down).kind(), "its close is deferred: it waits");
    assertEquals("PENDING_PAYMENT", status(down));
    assertEquals(dev.ordergate.domain.ExpiryCancel.Kind.CANCELLED, result.get(plain).kind());
    assertEquals("TIMEOUT_MESSAGE", exitSource(plain));
  }
}
