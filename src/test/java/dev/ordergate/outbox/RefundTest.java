package dev.ordergate.outbox;

import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Exception orders and tiered refunds, end to end: callbacks over HTTP, the refund request to a
 * real local endpoint, the exception's lifecycle and history through the admin API.
 */
class RefundTest {

  private static final long THRESHOLD = 1_000;
  private static FakeEndpoint endpoint;
  private static TestApp app;

  @BeforeAll
  static void start() {
    endpoint = new FakeEndpoint();
    JsonObject config = TestApp.baseConfig();
    JsonObject payments = config.getJsonObject("payments");
    payments.put("autoRefundMaxCents", THRESHOLD);
    payments.getJsonObject("channels").getJsonObject(TestApp.CHANNEL).put("refundUrl", endpoint.url("/refund"));
    config.put("outbox", new JsonObject().put("pollMs", 100).put("baseDelayMs", 20).put("maxAttempts", 4));
    app = TestApp.start(config);
  }

  @AfterAll
  static void stop() {
    app.close();
    endpoint.close();
  }

  @BeforeEach
  void fixtures() {
    app.truncate();
    endpoint.reset();
    app.setStock("A", 100);
  }

  /** Creates and cancels an order of {@code cents}; answers its amount. */
  private long cancelledOrder(String orderNo, long cents) {
    long amount = app.createOrder(order(orderNo, "u1", null, "A", 1, cents)).getLong("amountCents");
    expect(app.call(HttpMethod.POST, "/api/orders/" + orderNo + "/cancel", null, false), 200);
    return amount;
  }

  private long exceptionId(String txnId) {
    return app.rows("SELECT id FROM exception_orders WHERE txn_id = $1", txnId).get(0).getLong(0);
  }

  private String exceptionStatus(long id) {
    return app.rows("SELECT status FROM exception_orders WHERE id = $1", id).get(0).getString(0);
  }

  private JsonObject exception(long id) {
    return expect(app.call(HttpMethod.GET, "/admin/exceptions/" + id, null, true), 200).bodyAsJsonObject();
  }

  private static List<String> events(JsonObject exception) {
    return exception.getJsonArray("history").stream().map(h -> ((JsonObject) h).getString("event")).toList();
  }

  @Test
  void latePaymentBelowThresholdIsRefundedOnceThoughTheCallbackArrivesThreeTimes() {
    long amount = cancelledOrder("O1", 500);
    List<Future<JsonObject>> sent = List.of(
        app.callbackAsync(payment("T1", "O1", amount)).map(r -> expect(r, 200).bodyAsJsonObject()),
        app.callbackAsync(payment("T1", "O1", amount)).map(r -> expect(r, 200).bodyAsJsonObject()),
        app.callbackAsync(payment("T1", "O1", amount)).map(r -> expect(r, 200).bodyAsJsonObject()));
    Future.all(sent).await();
    sent.forEach(f -> assertEquals("LATE_AFTER_CANCEL", f.result().getString("outcome")));

    long id = exceptionId("T1");
    eventually("the exception is REFUNDED", () -> "REFUNDED".equals(exceptionStatus(id)));
    List<FakeEndpoint.Received> refunds = endpoint.at("/refund");
    assertEquals(1, refunds.size(), "exactly one refund request: " + refunds);
    JsonObject body = refunds.get(0).body();
    assertEquals(refunds.get(0).idempotencyKey(), body.getString("refundId"));
    assertEquals(TestApp.CHANNEL, body.getString("channel"));
    assertEquals("T1", body.getString("txnId"));
    assertEquals("O1", body.getString("orderNo"));
    assertEquals(amount, body.getLong("amountCents"));
    assertEquals("LATE_AFTER_CANCEL", body.getString("reason"));
    assertEquals(1, app.count("SELECT count(*) FROM exception_orders"));
    assertEquals(1, app.count("SELECT count(*) FROM outbox_events_shown WHERE type = 'REFUND_REQUESTED'"));

    JsonObject ex = exception(id);
    assertEquals("REFUNDED", ex.getString("status"));
    assertEquals(List.of("OPENED", "REFUND_REQUESTED", "REFUND_CONFIRMED"), events(ex));
    JsonObject request = ex.getJsonArray("refundRequests").getJsonObject(0);
    assertEquals(body.getString("refundId"), request.getString("eventId"));
    assertEquals("DELIVERED", request.getString("status"));
    assertEquals(1, request.getInteger("attempts"));
  }

  @Test
  void aDoublePaymentBelowThresholdIsRefundedToo() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    app.callback(payment("T1", "O1", 500));
    assertEquals("DOUBLE_PAYMENT", app.callback(payment("T2", "O1", 500)).getString("outcome"));
    long id = exceptionId("T2");
    eventually("the double payment is REFUNDED", () -> "REFUNDED".equals(exceptionStatus(id)));
    assertEquals("T2", endpoint.at("/refund").get(0).body().getString("txnId"));
    assertEquals("DOUBLE_PAYMENT", endpoint.at("/refund").get(0).body().getString("reason"));
  }

  @Test
  void latePaymentAboveThresholdGoesToManualReviewWithoutARefundRequest() {
    long amount = cancelledOrder("O1", THRESHOLD + 1);
    app.callback(payment("T1", "O1", amount));
    long id = exceptionId("T1");
    JsonObject ex = exception(id);
    assertEquals("MANUAL_REVIEW", ex.getString("status"));
    assertEquals(List.of("OPENED", "MANUAL_REVIEW"), events(ex));
    assertTrue(ex.getJsonArray("history").getJsonObject(1).getString("detail").contains("above autoRefundMaxCents"));
    assertEquals(0, app.count("SELECT count(*) FROM outbox_events_shown WHERE type = 'REFUND_REQUESTED'"));
    assertEquals(0, ex.getJsonArray("refundRequests").size());
  }

  @Test
  void exactlyAtThresholdIsRefundedAndAnAmountMismatchNeverIs() {
    long amount = cancelledOrder("O1", THRESHOLD);
    app.callback(payment("T1", "O1", amount));
    long atThreshold = exceptionId("T1");
    eventually("the exception at the threshold is REFUNDED", () -> "REFUNDED".equals(exceptionStatus(atThreshold)));
    app.createOrder(order("O2", "u1", null, "A", 1, 500));
    assertEquals("AMOUNT_MISMATCH", app.callback(payment("T2", "O2", 499)).getString("outcome"));
    assertEquals("MANUAL_REVIEW", exceptionStatus(exceptionId("T2")));
    assertEquals(1, app.count("SELECT count(*) FROM outbox_events_shown WHERE type = 'REFUND_REQUESTED'"));
  }

  @Test
  void refundEndpointFailingTwiceThenSucceedingEndsRefundedAfterThreeAttempts() {
    endpoint.responder = (path, n, body) -> n <= 2 ? 503 : 200;
    double retriesBefore = app.metric("ordergate.outbox.delivery", "type", "REFUND_REQUESTED", "result", "retry");
    long amount = cancelledOrder("O1", 500);
    app.callback(payment("T1", "O1", amount));
    long id = exceptionId("T1");
    eventually("the exception is REFUNDED", () -> "REFUNDED".equals(exceptionStatus(id)));

    List<FakeEndpoint.Received> refunds = endpoint.at("/refund");
    assertEquals(3, refunds.size());
    String key = refunds.get(0).idempotencyKey();
    refunds.forEach(r -> {
      assertEquals(key, r.idempotencyKey(), "the same key on every retry");
      assertEquals(key, r.body().getString("refundId"));
    });
    var event = app.rows("SELECT status, attempts FROM outbox_events_shown WHERE type = 'REFUND_REQUESTED'").get(0);
    assertEquals("DELIVERED", event.getString("status"));
    assertEquals(3, event.getInteger("attempts"));
    assertEquals(retriesBefore + 2, app.metric("ordergate.outbox.delivery", "type", "REFUND_REQUESTED", "result", "retry"));
    JsonObject ex = exception(id);
    assertEquals(List.of("OPENED", "REFUND_REQUESTED", "REFUND_CONFIRMED"), events(ex));
    assertTrue(ex.getJsonArray("history").getJsonObject(2).getString("detail").contains("after 3 attempt(s)"));
  }

  @Test
  void refundThatNeverSucceedsFailsIsListedDeadAndAnOperatorCanRetryIt() {
    endpoint.responder = (path, n, body) -> 500;
    long amount = cancelledOrder("O1", 500);
    app.callback(payment("T1", "O1", amount));
    long id = exceptionId("T1");
    eventually("the exception is REFUND_FAILED", () -> "REFUND_FAILED".equals(exceptionStatus(id)));
    assertEquals(4, endpoint.at("/refund").size());

    JsonArray dead = expect(app.call(HttpMethod.GET, "/admin/outbox?status=DEAD", null, true), 200).bodyAsJsonArray();
    assertEquals(1, dead.size());
    JsonObject deadEvent = dead.getJsonObject(0);
    assertEquals("REFUND_REQUESTED", deadEvent.getString("type"));
    assertEquals(4, deadEvent.getInteger("attempts"));
    assertTrue(deadEvent.getString("lastError").contains("HTTP 500"), deadEvent.encode());
    String eventId = deadEvent.getString("id");

    endpoint.responder = (path, n, body) -> 200;
    var retried = expect(app.call(HttpMethod.POST, "/admin/outbox/" + eventId + "/retry",
        new JsonObject().put("operator", "alice"), true), 200).bodyAsJsonObject();
    assertEquals("PENDING", retried.getString("status"));
    eventually("the retried refund is REFUNDED", () -> "REFUNDED".equals(exceptionStatus(id)));
    assertEquals(5, endpoint.at("/refund").size());
    assertEquals(eventId, endpoint.at("/refund").get(4).idempotencyKey());
    assertEquals(List.of("OPENED", "REFUND_REQUESTED", "REFUND_FAILED", "REFUND_RETRIED", "REFUND_CONFIRMED"),
        events(exception(id)));

    var again = app.call(HttpMethod.POST, "/admin/outbox/" + eventId + "/retry", null, true);
    assertEquals("NOT_DEAD", expect(again, 409).bodyAsJsonObject().getString("error"));
    expect(app.call(HttpMethod.POST, "/admin/outbox/00000000-0000-0000-0000-000000000000/retry", null, true), 404);
    expect(app.call(HttpMethod.POST, "/admin/outbox/not-a-uuid/retry", null, true), 400);
    expect(app.call(HttpMethod.GET, "/admin/outbox?status=LOST", null, true), 400);
    expect(app.call(HttpMethod.GET, "/admin/outbox", null, false), 401);
  }

  @Test
  void resolveIsRecordedAndCannotBeRepeated() {
    long amount = cancelledOrder("O1", THRESHOLD + 500);
    app.callback(payment("T1", "O1", amount));
    long id = exceptionId("T1");
    String path = "/admin/exceptions/" + id + "/resolve";

    assertEquals("VALIDATION_FAILED", expect(app.call(HttpMethod.POST, path,
        new JsonObject().put("operator", "alice").put("resolution", "FORGOTTEN"), true), 400)
        .bodyAsJsonObject().getString("error"));
    expect(app.call(HttpMethod.POST, path, new JsonObject().put("resolution", "DISMISSED"), true), 400);
    expect(app.call(HttpMethod.POST, path, null, true), 400);
    expect(app.call(HttpMethod.POST, path, new JsonObject().put("operator", "alice").put("resolution", "DISMISSED"),
        false), 401);
    assertEquals("MANUAL_REVIEW", exceptionStatus(id));

    JsonObject resolved = expect(app.call(HttpMethod.POST, path, new JsonObject().put("operator", "alice")
        .put("resolution", "REFUNDED_MANUALLY").put("note", "refunded by bank transfer, ticket 42"), true), 200)
        .bodyAsJsonObject();
    assertEquals("RESOLVED", resolved.getString("status"));
    assertEquals("REFUNDED_MANUALLY", resolved.getString("resolution"));
    assertEquals("alice", resolved.getString("resolvedBy"));
    assertEquals("refunded by bank transfer, ticket 42", resolved.getString("resolutionNote"));
    JsonObject last = resolved.getJsonArray("history").getJsonObject(2);
    assertEquals("RESOLVED", last.getString("event"));
    assertEquals("MANUAL_REVIEW", last.getString("from"));
    assertEquals("alice", last.getString("actor"));

    var again = app.call(HttpMethod.POST, path, new JsonObject().put("operator", "bob").put("resolution", "DISMISSED"), true);
    assertEquals("ALREADY_RESOLVED", expect(again, 409).bodyAsJsonObject().getString("error"));
    JsonObject after = exception(id);
    assertEquals("alice", after.getString("resolvedBy"));
    assertEquals(3, after.getJsonArray("history").size());
    expect(app.call(HttpMethod.POST, "/admin/exceptions/999999/resolve",
        new JsonObject().put("operator", "bob").put("resolution", "DISMISSED"), true), 404);
    expect(app.call(HttpMethod.GET, "/admin/exceptions/999999", null, true), 404);
    expect(app.call(HttpMethod.GET, "/admin/exceptions/abc", null, true), 400);
  }

  @Test
  void aRefundInFlightCannotBeResolvedByHand() {
    endpoint.responder = (path, n, body) -> FakeEndpoint.HANG;
    long amount = cancelledOrder("O1", 500);
    app.callback(payment("T1", "O1", amount));
    long id = exceptionId("T1");
    eventually("the refund request is in flight", () -> endpoint.held.size() == 1);
    var resp = app.call(HttpMethod.POST, "/admin/exceptions/" + id + "/resolve",
        new JsonObject().put("operator", "alice").put("resolution", "REFUNDED_MANUALLY"), true);
    assertEquals("REFUND_IN_PROGRESS", expect(resp, 409).bodyAsJsonObject().getString("error"));
    assertEquals("REFUND_PENDING", exceptionStatus(id));
    assertEquals(List.of("OPENED", "REFUND_REQUESTED"), events(exception(id)));
  }

  @Test
  void listFiltersByStatusAndKindAndOpenMeansUnresolved() {
    long amount = cancelledOrder("O1", THRESHOLD + 1);
    app.callback(payment("T1", "O1", amount));
    app.callback(payment("T2", "NOPE", 100));
    long resolved = exceptionId("T2");
    expect(app.call(HttpMethod.POST, "/admin/exceptions/" + resolved + "/resolve",
        new JsonObject().put("operator", "alice").put("resolution", "DISMISSED"), true), 200);

    JsonArray open = expect(app.call(HttpMethod.GET, "/admin/exceptions?status=OPEN", null, true), 200).bodyAsJsonArray();
    assertEquals(1, open.size());
    assertEquals("T1", open.getJsonObject(0).getString("txnId"));
    JsonArray review = expect(app.call(HttpMethod.GET, "/admin/exceptions?status=MANUAL_REVIEW&kind=LATE_AFTER_CANCEL",
        null, true), 200).bodyAsJsonArray();
    assertEquals(1, review.size());
    JsonArray unknown = expect(app.call(HttpMethod.GET, "/admin/exceptions?kind=UNKNOWN_ORDER", null, true), 200)
        .bodyAsJsonArray();
    assertEquals("RESOLVED", unknown.getJsonObject(0).getString("status"));
    assertEquals(0, expect(app.call(HttpMethod.GET, "/admin/exceptions?status=RESOLVED&kind=LATE_AFTER_CANCEL",
        null, true), 200).bodyAsJsonArray().size());
    expect(app.call(HttpMethod.GET, "/admin/exceptions?status=NEW", null, true), 400);

    app.verticle.outboxMetrics().refresh(app.verticle.pool(), 0).await();
    String scrape = app.scrape();
    assertTrue(scrape.contains("ordergate_exceptions_open{kind=\"LATE_AFTER_CANCEL\"} 1.0"), scrape);
    assertTrue(scrape.contains("ordergate_exceptions_open{kind=\"UNKNOWN_ORDER\"} 0.0"), scrape);
    assertTrue(scrape.contains("ordergate_outbox_pending"), scrape);
  }
}
