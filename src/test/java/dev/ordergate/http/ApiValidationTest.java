package dev.ordergate.http;

import dev.ordergate.support.TestApp;

import dev.ordergate.support.AppTest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Client mistakes get a 4xx with a code, never a 500; admin needs the token. */
class ApiValidationTest extends AppTest {

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 10);
  }

  private static void assertError(HttpMethod method, String path, JsonObject body, boolean admin, int status, String code) {
    var resp = app.call(method, path, body, admin);
    assertEquals(status, resp.statusCode(), path + " " + body + " -> " + resp.bodyAsString());
    assertEquals(code, resp.bodyAsJsonObject().getString("error"), resp.bodyAsString());
  }

  @Test
  void badOrderRequestsAre400() {
    String path = "/api/orders";
    assertError(HttpMethod.POST, path, new JsonObject(), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("O1", "u1", null), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("O1", "u1", null, "A", 0, 100), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("O1", "u1", null, "A", 1, -5), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("O1", "u1", null, "A", "2", 100), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("O1", "u1", null, "A", 1, 100, "A", 1, 100), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("bad order no", "u1", null, "A", 1, 100), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("O1", "u1", null, "A", 1, 100).put("paymentTimeoutSeconds", 0), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("O1", "u1", null, "A", 1, 100).put("paymentTimeoutSeconds", 7 * 24 * 3600 + 1), false, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, path, order("O1", "u1", null, "A", 1, 100).put("items", new JsonArray().add("x")), false, 400, "VALIDATION_FAILED");
    var notJson = app.http.post(path).putHeader("Authorization", "Bearer " + TestApp.API_KEY).sendBuffer(io.vertx.core.buffer.Buffer.buffer("{oops")).await();
    assertEquals(400, notJson.statusCode());
    assertEquals("MALFORMED_JSON", notJson.bodyAsJsonObject().getString("error"));
    assertEquals(0, app.count("SELECT count(*) FROM orders"));
    assertEquals(10, app.stock("A"));
  }

  @Test
  void unknownSkuIsOutOfStock() {
    assertError(HttpMethod.POST, "/api/orders", order("O1", "u1", null, "NOPE", 1, 100), false, 409, "OUT_OF_STOCK");
  }

  @Test
  void unknownThingsAre404() {
    assertError(HttpMethod.GET, "/api/orders/NOPE", null, false, 404, "NOT_FOUND");
    assertError(HttpMethod.GET, "/api/orders/NOPE/transitions", null, false, 404, "NOT_FOUND");
    assertError(HttpMethod.POST, "/api/orders/NOPE/cancel", null, false, 404, "NOT_FOUND");
    assertError(HttpMethod.GET, "/api/inventory/NOPE", null, false, 404, "NOT_FOUND");
    assertError(HttpMethod.GET, "/api/coupons/NOPE", null, false, 404, "NOT_FOUND");
    assertError(HttpMethod.GET, "/no/such/route", null, false, 404, "NOT_FOUND");
  }

  @Test
  void adminNeedsTheToken() {
    var noToken = app.call(HttpMethod.PUT, "/admin/inventory/A", new JsonObject().put("available", 1), false);
    assertEquals(401, noToken.statusCode());
    assertEquals("UNAUTHORIZED", noToken.bodyAsJsonObject().getString("error"));
    var wrong = app.http.put("/admin/inventory/A").putHeader("Authorization", "Bearer wrong")
        .sendBuffer(io.vertx.core.buffer.Buffer.buffer("{\"available\":1}")).await();
    assertEquals(401, wrong.statusCode());
    assertEquals(10, app.stock("A"));
  }

  @Test
  void badAdminInputIs400AndDuplicateCouponIs409() {
    assertError(HttpMethod.PUT, "/admin/inventory/A", new JsonObject().put("available", -1), true, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, "/admin/coupons", new JsonObject().put("code", "C"), true, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.POST, "/admin/orders/O1/cancel", new JsonObject(), true, 400, "VALIDATION_FAILED");
    assertError(HttpMethod.GET, "/admin/exceptions?status=WHATEVER", null, true, 400, "VALIDATION_FAILED");
    app.createCoupon("C", "u1", 10);
    assertError(HttpMethod.POST, "/admin/coupons", new JsonObject().put("code", "C").put("userId", "u1")
        .put("discountCents", 10), true, 409, "COUPON_EXISTS");
  }

  @Test
  void settingStockIsLedgered() {
    app.setStock("A", 4);
    app.setStock("A", 7);
    assertEquals(7, app.stock("A"));
    assertEquals(7, app.count("SELECT sum(delta) FROM inventory_ledger WHERE sku = 'A'"));
  }

  @Test
  void healthEndpointsAnswer() {
    assertEquals(200, app.call(HttpMethod.GET, "/health/live", null, false).statusCode());
    var ready = app.call(HttpMethod.GET, "/health/ready", null, false);
    assertEquals(200, ready.statusCode());
    assertEquals("UP", ready.bodyAsJsonObject().getString("database"));
  }
}
