package dev.ordergate.http;

import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Issue 14, defect 7: the shop's own API takes a service credential; callbacks and health stay open;
 * metrics are served on the management listener only.
 */
class AccessTest extends AppTest {

  private record Call(HttpMethod method, String path, JsonObject body) {}

  private static final List<Call> GUARDED = List.of(
      new Call(HttpMethod.POST, "/api/orders", order("NEW", "u1", null, "A", 1, 100)),
      new Call(HttpMethod.GET, "/api/orders/O1", null),
      new Call(HttpMethod.GET, "/api/orders/O1/transitions", null),
      new Call(HttpMethod.POST, "/api/orders/O1/cancel", new JsonObject().put("reason", "not mine")),
      new Call(HttpMethod.GET, "/api/inventory/A", null),
      new Call(HttpMethod.GET, "/api/coupons/C1", null));

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 10);
    app.createCoupon("C1", "u1", 100);
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
  }

  private static String state() {
    return app.rows("SELECT string_agg(order_no || ':' || status, ',' ORDER BY order_no) FROM orders").get(0).getString(0)
        + "|" + app.stock("A") + "|" + app.couponStatus("C1")
        + "|" + app.count("SELECT count(*) FROM order_transitions");
  }

  private static HttpResponse<Buffer> send(Call call, String authorization) {
    var req = app.http.request(call.method(), call.path());
    if (authorization != null) {
      req.putHeader("Authorization", authorization);
    }
    return (call.body() == null ? req.send() : req.sendBuffer(Buffer.buffer(call.body().encode()))).await();
  }

  @Test
  void everyGuardedRouteRefusesAMissingOrWrongKeyAndChangesNothing() {
    String before = state();
    for (Call call : GUARDED) {
      for (String auth : new String[] {null, "Bearer wrong-key-0123456789abcdef", "Bearer " + TestApp.ADMIN_TOKEN,
          "Basic " + TestApp.API_KEY, TestApp.API_KEY}) {
        HttpResponse<Buffer> resp = send(call, auth);
        assertEquals(401, resp.statusCode(), call + " with " + auth + ": " + resp.bodyAsString());
        assertEquals("UNAUTHORIZED", resp.bodyAsJsonObject().getString("error"));
      }
    }
    assertEquals(before, state());
    // With the key, the same calls work.
    assertEquals(200, send(GUARDED.get(1), "Bearer " + TestApp.API_KEY).statusCode());
  }

  @Test
  void callbacksAndHealthStayOpenAndMetricsAreOnTheManagementListenerOnly() {
    assertEquals("APPLIED", app.callback(payment("T1", "O1", 500)).getString("outcome"));
    assertEquals(200, app.http.get("/health/live").send().await().statusCode());
    assertEquals(200, app.http.get("/health/ready").send().await().statusCode());
    assertEquals(404, app.http.get("/metrics").send().await().statusCode());
    String scrape = app.scrape();
    assertFalse(scrape.isEmpty());
    assertEquals(200, app.http.get(app.verticle.managementPort(), "127.0.0.1", "/health/ready").send().await()
        .statusCode());
  }
}
