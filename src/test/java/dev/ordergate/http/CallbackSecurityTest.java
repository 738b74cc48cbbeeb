package dev.ordergate.http;

import dev.ordergate.channel.ordergate.OrdergateSignature;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Forged, stale, unsigned and malformed callbacks are rejected with a clear error and change nothing. */
class CallbackSecurityTest extends AppTest {

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 10);
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
  }

  @AfterEach
  void nothingChanged() {
    assertEquals("PENDING_PAYMENT", app.getOrder("O1").getString("status"));
    assertEquals(0, app.count("SELECT count(*) FROM payment_receipts"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
  }

  private static HttpResponse<Buffer> send(String channel, String signature, byte[] body) {
    var req = app.http.post("/api/callbacks/" + channel);
    if (signature != null) {
      req.putHeader(OrdergateSignature.HEADER, signature);
    }
    return req.sendBuffer(Buffer.buffer(body)).await();
  }

  private static byte[] bytes(JsonObject o) {
    return o.encode().getBytes(StandardCharsets.UTF_8);
  }

  private static long now() {
    return System.currentTimeMillis() / 1000;
  }

  private static void assertError(HttpResponse<Buffer> resp, int status, String code) {
    assertEquals(status, resp.statusCode(), resp.bodyAsString());
    assertEquals(code, resp.bodyAsJsonObject().getString("error"));
  }

  @Test
  void forgedSignatureIsRejected() {
    byte[] body = bytes(payment("T1", "O1", 500));
    assertError(send("sandbox", OrdergateSignature.header("not-the-secret", now(), "sandbox", body), body), 401, "BAD_SIGNATURE");
  }

  @Test
  void unsignedCallbackIsRejected() {
    assertError(send("sandbox", null, bytes(payment("T1", "O1", 500))), 401, "BAD_SIGNATURE");
    assertError(send("sandbox", "garbage", bytes(payment("T1", "O1", 500))), 401, "BAD_SIGNATURE");
  }

  @Test
  void staleAndFutureTimestampsAreRejected() {
    byte[] body = bytes(payment("T1", "O1", 500));
    assertError(send("sandbox", OrdergateSignature.header(TestApp.SECRET, now() - 301, "sandbox", body), body), 401, "BAD_SIGNATURE");
    assertError(send("sandbox", OrdergateSignature.header(TestApp.SECRET, now() + 301, "sandbox", body), body), 401, "BAD_SIGNATURE");
  }

  @Test
  void aSignatureDoesNotCoverAnotherBody() {
    byte[] signed = bytes(payment("T1", "O1", 1));
    byte[] sent = bytes(payment("T1", "O1", 500));
    assertError(send("sandbox", OrdergateSignature.header(TestApp.SECRET, now(), "sandbox", signed), sent), 401, "BAD_SIGNATURE");
  }

  @Test
  void unknownChannelIs404() {
    byte[] body = bytes(payment("T1", "O1", 500));
    assertError(send("nope", OrdergateSignature.header(TestApp.SECRET, now(), "sandbox", body), body), 404, "UNKNOWN_CHANNEL");
  }

  @Test
  void signedButMalformedBodiesAre400() {
    for (String raw : new String[] {"{not json", "[]", "{}", "{\"txnId\":\"T1\",\"orderNo\":\"O1\",\"amountCents\":\"500\",\"status\":\"SUCCESS\"}",
        "{\"txnId\":\"T1\",\"orderNo\":\"O1\",\"amountCents\":-1,\"status\":\"SUCCESS\"}",
        "{\"txnId\":\"\",\"orderNo\":\"O1\",\"amountCents\":500,\"status\":\"SUCCESS\"}"}) {
      byte[] body = raw.getBytes(StandardCharsets.UTF_8);
      var resp = send("sandbox", OrdergateSignature.header(TestApp.SECRET, now(), "sandbox", body), body);
      assertEquals(400, resp.statusCode(), raw + " -> " + resp.bodyAsString());
    }
  }

  @Test
  void bodyOver64KiBIs413() {
    byte[] body = new byte[65 * 1024];
    java.util.Arrays.fill(body, (byte) ' ');
    assertError(send("sandbox", OrdergateSignature.header(TestApp.SECRET, now(), "sandbox", body), body), 413, "PAYLOAD_TOO_LARGE");
  }

  @Test
  void anyConfiguredSecretVerifiesForRotationButChangesOnlyWithAValidBody() {
    byte[] body = bytes(new JsonObject().put("txnId", "T1"));
    var resp = send("sandbox", OrdergateSignature.header("old-secret-rotated-out-0", now(), "sandbox", body), body);
    assertEquals(400, resp.statusCode(), "the old secret verifies; the body then fails validation");
  }

  @Test
  void theLegacySignatureWithoutTheChannelNameIsRefusedOutsideTheTransitionPeriod() {
    byte[] body = bytes(payment("T1", "O1", 500));
    assertError(send("sandbox", OrdergateSignature.legacyHeader(TestApp.SECRET, now(), body), body), 401, "BAD_SIGNATURE");
  }

  @Test
  void aSignatureMadeForAnotherChannelNameIsRefused() {
    byte[] body = bytes(payment("T1", "O1", 500));
    assertError(send("sandbox", OrdergateSignature.header(TestApp.SECRET, now(), "sandbox-stripe", body), body), 401, "BAD_SIGNATURE");
  }
}
