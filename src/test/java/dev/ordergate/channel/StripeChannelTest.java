package dev.ordergate.channel;

import dev.ordergate.channel.stripe.StripeSignature;
import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.Payment;
import dev.ordergate.sim.StripeGateway;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StripeChannelTest extends ChannelContract {

  private static final String SANDBOX_SECRET = "whsec_DEVELOPMENT_ONLY_sandbox_0000000000000000";
  private static final String OLD_SECRET = "whsec_old_rotated_secret_0000000000";

  @BeforeAll
  static void start() {
    JsonObject config = Sandbox.config();
    config.getJsonObject("payments").getJsonObject("channels").getJsonObject(Sandbox.STRIPE)
        .getJsonArray("webhookSecrets").add(OLD_SECRET);
    app = TestApp.start(config);
  }

  @Override
  protected String channel() {
    return Sandbox.STRIPE;
  }

  @Override
  protected Payment payment(String txn, long amount) {
    return new Payment("O1", "pi_" + txn, amount, "CNY", null);
  }

  @Override
  protected Delivery paid(Payment p, long nowSeconds) {
    return Sandbox.stripe().notification(p, nowSeconds);
  }

  @Override
  protected Delivery notPaid(Payment p) {
    // A delayed payment method: the session completes before the money arrives.
    JsonObject session = new JsonObject().put("id", "cs_test_1").put("object", "checkout.session")
        .put("status", "complete").put("payment_status", "unpaid").put("client_reference_id", p.orderNo())
        .put("payment_intent", p.txnId()).put("amount_total", p.amountCents()).put("currency", "cny");
    return Sandbox.stripe().notification(StripeGateway.event("checkout.session.completed", session, now()), now());
  }

  @Override
  protected Delivery forged(Payment p) {
    Delivery d = paid(p, now());
    return new Delivery(Map.of(StripeSignature.HEADER, "t=" + now() + ",v1=" + "0".repeat(64)), d.body());
  }

  @Override
  protected Delivery tampered(Payment p) {
    Delivery d = paid(p, now());
    String body = new String(d.body(), StandardCharsets.UTF_8);
    assertTrue(body.contains("\"amount_received\" : " + p.amountCents()), body);
    return new Delivery(d.headers(), body.replace("\"amount_received\" : " + p.amountCents(), "\"amount_received\" : 1")
        .getBytes(StandardCharsets.UTF_8));
  }

  @Override
  protected Delivery wrongKey(Payment p) {
    return new StripeGateway("whsec_someone_elses_secret_000000").notification(p, now());
  }

  @Override
  protected Delivery wrongApp(Payment p) {
    return null;
  }

  @Override
  protected Delivery rotated(Payment p) {
    return new StripeGateway(OLD_SECRET).notification(p, now());
  }

  @Override
  protected boolean signsTime() {
    return true;
  }

  @Override
  protected void assertSuccessAnswer(HttpResponse<Buffer> resp) {
    assertEquals(200, resp.statusCode(), resp.bodyAsString());
    assertEquals(true, json(resp).getBoolean("received"));
  }

  @Override
  protected void assertFailureAnswer(HttpResponse<Buffer> resp, String code) {
    assertEquals(400, resp.statusCode());
    assertEquals(code, json(resp).getString("error"));
  }

  @Override
  protected void assertRetryAnswer(HttpResponse<Buffer> resp) {
    assertServerError(resp);
    assertTrue(json(resp).getString("error").matches("DATABASE_UNAVAILABLE|INTERNAL_ERROR"), resp.bodyAsString());
  }

  @Test
  @Order(20)
  void checkoutSessionAndPaymentIntentEventsOfOnePaymentAreOneReceipt() {
    Payment p = payment("TXN1", AMOUNT);
    HttpResponse<Buffer> session = send(paid(p.withStatus("checkout.session.completed"), now()));
    assertSuccessAnswer(session);
    assertEquals("APPLIED", session.getHeader("X-Ordergate-Outcome"));
    HttpResponse<Buffer> intent = send(paid(p, now()));
    assertEquals("APPLIED,DUPLICATE", intent.getHeader("X-Ordergate-Outcome"));
    assertEquals(1, app.count("SELECT count(*) FROM payment_receipts WHERE txn_id = 'pi_TXN1'"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
  }

  @Test
  @Order(21)
  void oneValidV1AmongSeveralVerifiesAndOtherEventTypesAreIgnored() {
    Delivery d = paid(payment("TXN1", AMOUNT), now());
    long t = now();
    Delivery several = new Delivery(Map.of(StripeSignature.HEADER, "t=" + t + ",v1=" + "a".repeat(64) + ",v0=zz,"
        + StripeSignature.header(SANDBOX_SECRET, t, d.body()).substring(("t=" + t + ",").length())),
        d.body());
    assertEquals("APPLIED", send(several).getHeader("X-Ordergate-Outcome"));
    HttpResponse<Buffer> other = send(Sandbox.stripe().notification(
        StripeGateway.event("customer.created", new JsonObject().put("id", "cus_1").put("object", "customer"), now()), now()));
    assertSuccessAnswer(other);
    assertEquals("IGNORED", other.getHeader("X-Ordergate-Outcome"));
  }
}
