package dev.ordergate.tools;

import dev.ordergate.sim.Sender;
import dev.ordergate.sim.SimConfig;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The gateway simulator against the real service: each kind pays, duplicates, reorders and retries. */
class GatewaySimTest {

  private static TestApp app;
  private static Sender sender;
  private static SimConfig sim;

  @BeforeAll
  static void start() {
    app = TestApp.start(Sandbox.config());
    sender = new Sender(app.vertx, WebClient.create(app.vertx), 0.0001, 16);
    sim = Sandbox.sim();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @BeforeEach
  void fresh() {
    app.truncate();
    app.pool.query("TRUNCATE channel_notifications").execute().await();
    app.setStock("A", 100);
  }

  private static String service() {
    return "http://127.0.0.1:" + app.verticle.port();
  }

  private JsonObject pay(JsonObject spec) {
    return GatewaySimCommand.pay(app.vertx, sim, sender, spec.put("service", service())).await();
  }

  @Test
  void eachKindPaysAnOrderThroughItsSandboxChannel() {
    int i = 0;
    for (String kind : new String[] {"wechatpay-v3", "alipay", "stripe"}) {
      String orderNo = "S" + i++;
      app.createOrder(order(orderNo, "u1", null, "A", 1, 1234));
      JsonObject report = pay(new JsonObject().put("kind", kind).put("orderNo", orderNo).put("amountCents", 1234));
      assertTrue(report.getBoolean("accepted"), report.encodePrettily());
      assertEquals("APPLIED", report.getJsonArray("notifications").getJsonObject(0).getJsonArray("attempts")
          .getJsonObject(0).getString("outcome"));
      assertEquals("PAID", app.getOrder(orderNo).getString("status"), kind);
    }
  }

  @Test
  void waitBuyerPayThenTradeSuccessOutOfOrderAndDuplicatedPaysOnce() {
    app.createOrder(order("S1", "u1", null, "A", 1, 500));
    JsonObject report = pay(new JsonObject().put("kind", "alipay").put("orderNo", "S1").put("amountCents", 500)
        .put("statuses", new JsonArray().add("WAIT_BUYER_PAY").add("TRADE_SUCCESS").add("TRADE_FINISHED"))
        .put("outOfOrder", true).put("duplicates", 2));
    assertTrue(report.getBoolean("accepted"), report.encodePrettily());
    JsonArray notifications = report.getJsonArray("notifications");
    assertEquals(9, notifications.size(), "3 notifications, each delivered 3 times");
    assertEquals("TRADE_FINISHED", notifications.getJsonObject(0).getString("status"), "reversed");
    assertEquals("PAID", app.getOrder("S1").getString("status"));
    assertEquals(1, app.count("SELECT count(*) FROM payment_receipts"));
    // Every delivery recorded with the gate: WAIT_BUYER_PAY claimed nothing; TRADE_SUCCESS and TRADE_FINISHED
    // are both the payment (status SUCCESS).
    assertEquals(3, app.count("SELECT deliveries FROM payment_notifications WHERE gateway_status = 'WAIT_BUYER_PAY'"));
    assertEquals(6, app.count("SELECT deliveries FROM payment_notifications WHERE gateway_status = 'SUCCESS'"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
  }

  @Test
  void itRetriesOnTheGatewaysScheduleUntilTheSuccessAnswer() {
    AtomicInteger calls = new AtomicInteger();
    var server = app.vertx.createHttpServer().requestHandler(req -> {
      int n = calls.incrementAndGet();
      req.response().setStatusCode(n < 3 ? 503 : 200).end(n < 3 ? "fail" : "success");
    }).listen(0, "127.0.0.1").await();
    try {
      JsonObject report = pay(new JsonObject().put("kind", "alipay").put("orderNo", "S1").put("amountCents", 500)
          .put("notifyUrl", "http://127.0.0.1:" + server.actualPort() + "/notify"));
      assertTrue(report.getBoolean("accepted"));
      assertEquals(3, report.getJsonArray("notifications").getJsonObject(0).getJsonArray("attempts").size());
      // An endpoint that never answers "success": Alipay's schedule (7 retries) is used up, then it gives up.
      calls.set(-1000);
      Sender fast = new Sender(app.vertx, WebClient.create(app.vertx), 0.000_01, 16);
      JsonObject never = GatewaySimCommand.pay(app.vertx, sim, fast, new JsonObject().put("kind", "alipay")
          .put("orderNo", "S1").put("amountCents", 500)
          .put("notifyUrl", "http://127.0.0.1:" + server.actualPort() + "/notify")).await();
      assertFalse(never.getBoolean("accepted"));
      assertEquals(8, never.getJsonArray("notifications").getJsonObject(0).getJsonArray("attempts").size());
    } finally {
      server.close().await();
    }
  }

  @Test
  void theCommandLineAndTheHttpServicePayToo() throws Exception {
    app.createOrder(order("S1", "u1", null, "A", 1, 700));
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int status = new GatewaySimCommand(new PrintStream(buf, true, StandardCharsets.UTF_8)).run(new String[] {
        "pay", "--kind", "wechatpay-v3", "--order", "S1", "--amount", "700", "--service", service()});
    assertEquals(Tools.OK, status, buf.toString(StandardCharsets.UTF_8));
    assertTrue(buf.toString(StandardCharsets.UTF_8).contains("HTTP 204"), buf.toString(StandardCharsets.UTF_8));
    assertEquals("PAID", app.getOrder("S1").getString("status"));

    app.createOrder(order("S2", "u1", null, "A", 1, 800));
    var server = GatewaySimCommand.serve(app.vertx, sim, sender, "127.0.0.1", 0).await();
    try {
      var resp = WebClient.create(app.vertx).post(server.actualPort(), "127.0.0.1", "/sim/pay")
          .sendJsonObject(new JsonObject().put("kind", "stripe").put("orderNo", "S2").put("amountCents", 800)
              .put("service", service())).await();
      assertEquals(200, resp.statusCode(), resp.bodyAsString());
      assertTrue(resp.bodyAsJsonObject().getBoolean("accepted"));
      assertEquals("PAID", app.getOrder("S2").getString("status"));
      assertEquals(400, WebClient.create(app.vertx).post(server.actualPort(), "127.0.0.1", "/sim/pay")
          .sendJsonObject(new JsonObject().put("kind", "paypal")).await().statusCode());
    } finally {
      server.close().await();
    }
  }
}
