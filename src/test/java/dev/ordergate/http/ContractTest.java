package dev.ordergate.http;

import dev.ordergate.channel.ordergate.OrdergateSignature;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.json.schema.OutputUnit;
import io.vertx.json.schema.common.dsl.SchemaType;
import io.vertx.openapi.contract.Location;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.contract.Parameter;
import io.vertx.openapi.validation.ResponseValidator;
import io.vertx.openapi.validation.ValidatableResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The contract ({@code src/main/resources/openapi.json}, served at {@code /openapi.json}) against
 * the running service: every answer below, success and error alike, is validated by Vert.x's own
 * OpenAPI validator ({@code vertx-openapi}) against the operation it belongs to. A route the
 * document does not list, a status it does not list for that operation, or a body that does not
 * match its schema fails the test; so does an operation the walk never exercised. The requests
 * are checked too, with the same library's schema validator: what the service accepts (2xx) the
 * contract must accept, and what it refuses as invalid (400) the contract must refuse.
 */
class ContractTest extends AppTest {

  private static OpenAPIContract contract;
  private static ResponseValidator validator;
  private final Set<String> exercised = new TreeSet<>();

  @BeforeAll
  static void loadContract() throws Exception {
    HttpResponse<Buffer> served = app.http.get("/openapi.json").send().await();
    assertEquals(200, served.statusCode());
    JsonObject document = served.bodyAsJsonObject();
    assertEquals(new JsonObject(Files.readString(Path.of("src/main/resources/openapi.json"))), document,
        "the service serves the document kept in the repository");
    assertEquals("3.1.0", document.getString("openapi"));
    contract = OpenAPIContract.from(app.vertx, document).await();
    validator = ResponseValidator.create(app.vertx, contract);
  }

  /**
   * Validates {@code resp} as the answer to {@code method path} (sent with {@code body}: a
   * JsonObject, raw text or null) and checks it was the expected status.
   */
  private HttpResponse<Buffer> check(HttpMethod method, String path, Object body, HttpResponse<Buffer> resp,
                                     int expected) {
    String bare = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
    Operation op = contract.findOperation(bare, method);
    if (op == null) {
      fail("undocumented route: " + method + " " + bare + " answered " + resp.statusCode());
    }
    assertEquals(expected, resp.statusCode(), method + " " + path + ": " + resp.bodyAsString());
    String refused = requestProblem(op, path, body);
    int status = resp.statusCode();
    String code = status == 400 ? resp.bodyAsJsonObject().getString("error") : null;
    if (status / 100 == 2 && refused != null) {
      fail(method + " " + path + " was accepted (" + status + ") but the contract refuses the request: " + refused);
    }
    if (("VALIDATION_FAILED".equals(code) || "MALFORMED_JSON".equals(code)) && refused == null) {
      fail(method + " " + path + " was refused (" + resp.bodyAsString() + ") but the contract allows the request");
    }
    Map<String, String> headers = new HashMap<>();
    resp.headers().forEach(h -> headers.put(h.getKey(), h.getValue()));
    String type = resp.getHeader("Content-Type");
    ValidatableResponse answer = resp.body() == null || resp.body().length() == 0
        ? ValidatableResponse.create(resp.statusCode(), headers)
        : ValidatableResponse.create(resp.statusCode(), headers, resp.body(), type);
    try {
      validator.validate(answer, op.getOperationId()).await();
    } catch (RuntimeException e) {
      fail(method + " " + path + " answered " + resp.statusCode() + " " + resp.bodyAsString()
          + ", which the contract does not allow: " + e.getMessage());
    }
    exercised.add(op.getOperationId());
    return resp;
  }

  /** Why the contract refuses this request (path and query parameters, body), or null if it accepts it. */
  private static String requestProblem(Operation op, String path, Object body) {
    Map<String, String> values = new HashMap<>();
    String[] template = op.getOpenAPIPath().split("/");
    String[] actual = (path.contains("?") ? path.substring(0, path.indexOf('?')) : path).split("/");
    for (int i = 0; i < template.length && i < actual.length; i++) {
      if (template[i].startsWith("{")) {
        values.put(template[i].substring(1, template[i].length() - 1), URLDecoder.decode(actual[i], StandardCharsets.UTF_8));
      }
    }
    if (path.contains("?")) {
      for (String pair : path.substring(path.indexOf('?') + 1).split("&")) {
        String[] kv = pair.split("=", 2);
        values.put(URLDecoder.decode(kv[0], StandardCharsets.UTF_8), kv.length > 1 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
      }
    }
    for (Parameter param : op.getParameters()) {
      String raw = values.get(param.getName());
      if (raw == null || param.getIn() == Location.HEADER) {
        continue;
      }
      Object value = param.getSchemaType() == SchemaType.INTEGER && raw.matches("-?\\d{1,18}") ? (Object) Long.parseLong(raw) : raw;
      OutputUnit unit = contract.getSchemaRepository().validator(param.getSchema()).validate(value);
      if (!unit.getValid()) {
        return "parameter " + param.getName() + "=" + raw + ": " + unit.getErrors();
      }
    }
    if (op.getRequestBody() == null) {
      return null;
    }
    Object json;
    if (body == null) {
      return op.getRequestBody().isRequired() ? "the body is required" : null;
    } else if (body instanceof String raw) {
      try {
        json = io.vertx.core.json.Json.decodeValue(raw);
      } catch (RuntimeException e) {
        return "the body is not JSON";
      }
    } else {
      json = body;
    }
    OutputUnit unit = contract.getSchemaRepository()
        .validator(op.getRequestBody().getContent().get("application/json").getSchema()).validate(json);
    return unit.getValid() ? null : "body: " + unit.getErrors();
  }

  private HttpResponse<Buffer> call(HttpMethod method, String path, Object body, boolean admin, int expected) {
    HttpResponse<Buffer> resp;
    if (body instanceof String raw) {
      var req = app.http.request(method, path);
      if (admin) {
        req.putHeader("Authorization", "Bearer " + TestApp.ADMIN_TOKEN);
      } else if (path.startsWith("/api/") && !path.startsWith("/api/callbacks/")) {
        req.putHeader("Authorization", "Bearer " + TestApp.API_KEY);
      }
      resp = req.sendBuffer(Buffer.buffer(raw)).await();
    } else {
      resp = app.call(method, path, (JsonObject) body, admin);
    }
    return check(method, path, body, resp, expected);
  }

  private HttpResponse<Buffer> signedCallback(String channel, String body, String secret, int expected) {
    byte[] raw = body.getBytes(StandardCharsets.UTF_8);
    String path = "/api/callbacks/" + channel;
    return check(HttpMethod.POST, path, body, app.http.post(path)
        .putHeader(OrdergateSignature.HEADER, OrdergateSignature.header(secret, System.currentTimeMillis() / 1000, channel, raw))
        .sendBuffer(Buffer.buffer(raw)).await(), expected);
  }

  @Test
  void everyRouteAnswersWhatTheContractSays() {
    app.truncate();
    HttpMethod GET = HttpMethod.GET;
    HttpMethod POST = HttpMethod.POST;
    HttpMethod PUT = HttpMethod.PUT;
    call(GET, "/health/live", null, false, 200);
    call(GET, "/health/ready", null, false, 200);
    call(GET, "/openapi.json", null, false, 200);

    // Catalog (admin) and its reads.
    call(PUT, "/admin/inventory/A", new JsonObject().put("available", 10).put("operator", "ops"), true, 200);
    call(PUT, "/admin/inventory/B", new JsonObject().put("available", 1), true, 200);
    call(PUT, "/admin/inventory/A", new JsonObject().put("available", -1), true, 400);
    call(PUT, "/admin/inventory/A", new JsonObject().put("available", 1), false, 401);
    call(POST, "/admin/coupons", new JsonObject().put("code", "C1").put("userId", "u1").put("discountCents", 100), true, 201);
    call(POST, "/admin/coupons", new JsonObject().put("code", "C1").put("userId", "u1").put("discountCents", 100), true, 409);
    call(POST, "/admin/coupons", "{not json", true, 400);
    call(GET, "/api/inventory/A", null, false, 200);
    call(GET, "/api/inventory/NOPE", null, false, 404);
    call(GET, "/api/inventory/bad%20sku", null, false, 400);
    call(GET, "/api/coupons/C1", null, false, 200);
    call(GET, "/api/coupons/NOPE", null, false, 404);
    check(GET, "/api/coupons/C1", null, app.http.get("/api/coupons/C1").send().await(), 401);
    check(GET, "/api/inventory/A", null, app.http.get("/api/inventory/A")
        .putHeader("Authorization", "Bearer not-a-key").send().await(), 401);
    check(PUT, "/admin/inventory/A", null, app.http.put("/admin/inventory/A")
        .putHeader("Authorization", "Bearer " + TestApp.ADMIN_TOKEN)
        .putHeader("Content-Type", "multipart/form-data; boundary=x").sendBuffer(Buffer.buffer("--x--")).await(), 415);

    // Orders.
    JsonObject o1 = order("O1", "u1", "C1", "A", 1, 500);
    JsonObject created = call(POST, "/api/orders", o1, false, 201).bodyAsJsonObject();
    call(POST, "/api/orders", o1, false, 200);
    call(POST, "/api/orders", order("O1", "u2", null, "A", 2, 500), false, 409);
    call(POST, "/api/orders", order("O9", "u1", null, "B", 5, 500), false, 409);
    call(POST, "/api/orders", order("O8", "u9", "C1", "A", 1, 500), false, 409);
    call(POST, "/api/orders", new JsonObject().put("userId", "u1"), false, 400);
    call(POST, "/api/orders", "[1,2]", false, 400);
    call(POST, "/api/orders", "{\"pad\":\"" + "x".repeat(70_000) + "\"}", false, 413);
    call(GET, "/api/orders/O1", null, false, 200);
    call(GET, "/api/orders/NOPE", null, false, 404);
    call(GET, "/api/orders/O1/transitions", null, false, 200);
    call(GET, "/api/orders/NOPE/transitions", null, false, 404);
    call(POST, "/api/orders/NOPE/cancel", null, false, 404);
    call(POST, "/api/orders/O1/cancel", new JsonObject().put("reason", 5), false, 400);

    // Payment callbacks.
    long amount = created.getLong("amountCents");
    signedCallback("sandbox", payment("T1", "O1", amount).encode(), TestApp.SECRET, 200);
    signedCallback("sandbox", payment("T1", "O1", amount).encode(), TestApp.SECRET, 200);
    signedCallback("sandbox", payment("T1", "O1", amount).encode(), "not-the-secret", 401);
    signedCallback("sandbox", "{\"txnId\":", TestApp.SECRET, 400);
    signedCallback("nope", payment("T2", "O1", amount).encode(), TestApp.SECRET, 404);
    call(POST, "/api/orders/O1/cancel", null, false, 409);

    // Cancels: the customer's and the operator's; then a late payment opens an exception order.
    call(POST, "/api/orders", order("O2", "u1", null, "A", 1, 300), false, 201);
    call(POST, "/api/orders/O2/cancel", new JsonObject().put("userId", "u1").put("reason", "changed my mind"), false, 200);
    call(POST, "/api/orders/O2/cancel", null, false, 200);
    call(POST, "/api/orders", order("O3", "u1", null, "A", 1, 300), false, 201);
    call(POST, "/admin/orders/O3/cancel", new JsonObject().put("operator", "ops").put("reason", "fraud"), true, 200);
    call(POST, "/admin/orders/O3/cancel", new JsonObject(), true, 400);
    call(POST, "/admin/orders/NOPE/cancel", new JsonObject().put("operator", "ops"), true, 404);
    call(POST, "/admin/orders/O1/cancel", new JsonObject().put("operator", "ops"), true, 409);

    // Payment attempts (the gateways themselves are played in CloseBeforeCancelTest): the refusals and the listing.
    call(GET, "/api/orders/O2/payments", null, false, 200);
    call(GET, "/api/orders/NOPE/payments", null, false, 404);
    call(POST, "/api/orders/O2/payments", new JsonObject(), false, 400);
    call(POST, "/api/orders/O2/payments", new JsonObject().put("channel", "no such channel"), false, 400);
    call(POST, "/api/orders/O2/payments", new JsonObject().put("channel", "nope"), false, 400);
    call(POST, "/api/orders/O2/payments", new JsonObject().put("channel", TestApp.CHANNEL), false, 400);
    signedCallback("sandbox", payment("T3", "O2", 300).encode(), TestApp.SECRET, 200);

    // Exception orders.
    var list = call(GET, "/admin/exceptions?status=OPEN", null, true, 200).bodyAsJsonArray();
    assertEquals(1, list.size(), list.encode());
    long id = list.getJsonObject(0).getLong("id");
    call(GET, "/admin/exceptions?kind=LATE_AFTER_CANCEL&limit=5", null, true, 200);
    call(GET, "/admin/exceptions?status=BOGUS", null, true, 400);
    call(GET, "/admin/exceptions/" + id, null, true, 200);
    call(GET, "/admin/exceptions/999999", null, true, 404);
    call(GET, "/admin/exceptions/x", null, true, 400);
    call(POST, "/admin/exceptions/" + id + "/resolve", new JsonObject().put("operator", "ops").put("resolution", "BOGUS"), true, 400);
    String resolution = dev.ordergate.exceptions.Resolution.values()[0].name();
    call(POST, "/admin/exceptions/" + id + "/resolve", new JsonObject().put("operator", "ops").put("resolution", resolution)
        .put("note", "refunded by hand"), true, 200);
    call(POST, "/admin/exceptions/" + id + "/resolve", new JsonObject().put("operator", "ops").put("resolution", resolution), true, 409);
    call(POST, "/admin/exceptions/999999/resolve", new JsonObject().put("operator", "ops").put("resolution", resolution), true, 404);

    // Outbox.
    call(GET, "/admin/outbox", null, true, 200);
    var events = call(GET, "/admin/outbox?status=DELIVERED&limit=50", null, true, 200).bodyAsJsonArray();
    call(GET, "/admin/outbox?status=PENDING", null, true, 200);
    call(GET, "/admin/outbox?status=NOPE", null, true, 400);
    call(POST, "/admin/outbox/00000000-0000-0000-0000-000000000000/retry", null, true, 404);
    call(POST, "/admin/outbox/not-a-uuid/retry", null, true, 400);
    if (!events.isEmpty()) {
      call(POST, "/admin/outbox/" + events.getJsonObject(0).getString("id") + "/retry",
          new JsonObject().put("operator", "ops"), true, 409);
    }

    // Sweep and reconciliation.
    call(POST, "/admin/sweeps/run", null, true, 200);
    call(GET, "/admin/sweeps?limit=5", null, true, 200);
    call(GET, "/admin/sweeps?limit=0", null, true, 400);
    JsonObject report = call(GET, "/admin/reconcile", null, true, 200).bodyAsJsonObject();
    assertTrue(report.getBoolean("ok"), report.encode());

    // The operator console's routes (issue 11), with the token here; ConsoleApiTest and
    // ConsoleBrowserTest walk them with a session.
    call(POST, "/admin/login", new JsonObject().put("name", "nobody").put("password", "wrong"), false, 401);
    call(POST, "/admin/login", new JsonObject().put("name", "nobody"), false, 400);
    call(GET, "/admin/session", null, true, 200);
    call(POST, "/admin/logout", null, true, 400);
    call(GET, "/admin/summary", null, true, 200);
    call(GET, "/admin/orders?txnId=T1&limit=5", null, true, 200);
    call(GET, "/admin/orders?txnId=bad%20id", null, true, 400);
    call(GET, "/admin/orders/O1", null, true, 200);
    call(GET, "/admin/orders/NOPE", null, true, 404);
    call(GET, "/admin/audit?action=RUN_SWEEP&limit=1", null, true, 200);
    call(GET, "/admin/audit?limit=0", null, true, 400);
    call(GET, "/admin/sweeps/settings", null, true, 200);
    call(GET, "/admin/reconcile/last", null, true, 200);
    call(POST, "/admin/reconcile/run", null, true, 200);
    call(GET, "/admin/reconcile/gateway?channel=sandbox&date=2026-12-01", null, true, 400);
    call(GET, "/admin/reconcile/gateway?channel=sandbox&date=1.12.2026", null, true, 400);
    call(GET, "/admin/exceptions?channel=sandbox&from=2020-01-01&limit=1", null, true, 200);

    // The admin throttle, from a client address of its own (the others keep working).
    WebClient guesser = WebClient.create(app.vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
        .setDefaultPort(app.verticle.port()).setLocalAddress("127.0.0.9"));
    try {
      for (int i = 0; i < AuthThrottle.MAX_FAILURES; i++) {
        check(GET, "/admin/sweeps", null, guesser.get("/admin/sweeps").putHeader("Authorization", "Bearer guess").send().await(), 401);
      }
      check(GET, "/admin/sweeps", null, guesser.get("/admin/sweeps").send().await(), 429);
    } finally {
      guesser.close();
    }

    Set<String> all = contract.operations().stream().map(Operation::getOperationId).collect(Collectors.toCollection(TreeSet::new));
    all.removeAll(exercised);
    assertTrue(all.isEmpty(), "documented operations the walk never exercised: " + all);
  }

  /** Where each routes class is mounted on the public listener (OrdergateVerticle's wiring). */
  private static final Map<String, String> MOUNTS = Map.ofEntries(
      Map.entry("OrderRoutes", "/api"), Map.entry("CallbackRoutes", "/api"), Map.entry("AdminRoutes", "/admin"),
      Map.entry("OutboxRoutes", "/admin"), Map.entry("ExceptionRoutes", "/admin"), Map.entry("SweepRoutes", "/admin"),
      Map.entry("ReconcileRoutes", "/admin"), Map.entry("HealthRoutes", ""), Map.entry("ContractRoutes", ""),
      Map.entry("SessionRoutes", "/admin"), Map.entry("ConsoleApiRoutes", "/admin"),
      Map.entry("PaymentRoutes", "/api"));
  private static final java.util.regex.Pattern ROUTE =
      java.util.regex.Pattern.compile("\\b(\\w+)\\.(get|post|put|delete|patch)\\(\"(/[^\"]*)\"\\)");

  @Test
  void everyRouteInTheSourceIsInTheContract() throws Exception {
    // A route added without documenting it fails here even before the walk above exercises it.
    Set<String> undocumented = new TreeSet<>();
    int routes = 0;
    try (var files = Files.list(Path.of("src/main/java/dev/ordergate/http"))) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        String name = file.getFileName().toString().replace(".java", "");
        var m = ROUTE.matcher(Files.readString(file));
        while (m.find()) {
          if (m.group(1).equals("management")) {
            continue; // the management listener (metrics, health details) is not the public API
          }
          if (name.equals("ConsoleRoutes")) {
            continue; // the console's HTML page and static files, not the JSON API (ConsoleApiTest checks them)
          }
          String prefix = MOUNTS.get(name);
          assertNotNull(prefix, name + " mounts routes: add where it is mounted to MOUNTS");
          String path = prefix + m.group(3).replaceAll(":(\\w+)", "{$1}");
          routes++;
          if (contract.findOperation(path.replaceAll("\\{\\w+}", "x"), HttpMethod.valueOf(m.group(2).toUpperCase())) == null) {
            undocumented.add(m.group(2).toUpperCase() + " " + path + " (" + name + ")");
          }
        }
      }
    }
    assertTrue(routes >= contract.operations().size(), "found " + routes + " routes");
    assertTrue(undocumented.isEmpty(), "routes missing from openapi.json: " + undocumented);
  }

  @Test
  void theValidatorRejectsWhatTheContractDoesNotSay() {
    // The check above can fail: an undocumented status, an extra field and a wrong type are refused.
    Buffer order = Buffer.buffer(new JsonObject().put("orderNo", "O1").encode());
    String json = "application/json";
    assertThrows(RuntimeException.class, () -> validator.validate(ValidatableResponse.create(418, Map.of(), order, json), "getOrder").await());
    assertThrows(RuntimeException.class, () -> validator.validate(ValidatableResponse.create(200, Map.of(), order, json), "getOrder").await());
    Buffer stock = Buffer.buffer(new JsonObject().put("sku", "A").put("available", 1).put("extra", true).encode());
    assertThrows(RuntimeException.class, () -> validator.validate(ValidatableResponse.create(200, Map.of(), stock, json), "getStock").await());
    Buffer wrongCode = Buffer.buffer(new JsonObject().put("error", "SOMETHING_ELSE").put("message", "m").encode());
    assertThrows(RuntimeException.class, () -> validator.validate(ValidatableResponse.create(404, Map.of(), wrongCode, json), "getStock").await());
    Buffer good = Buffer.buffer(new JsonObject().put("sku", "A").put("available", 1).encode());
    assertNotNull(validator.validate(ValidatableResponse.create(200, Map.of(), good, json), "getStock").await());
    assertTrue(contract.operations().size() >= 21);
  }
}
