package dev.ordergate.channel;

import dev.ordergate.sim.AlipayGateway;
import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.Payment;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AlipayChannelTest extends ChannelContract {

  private static final String APP = "2021000000000000";

  @BeforeAll
  static void start() {
    JsonObject config = Sandbox.config();
    config.getJsonObject("payments").getJsonObject("channels").getJsonObject(Sandbox.ALIPAY)
        .getJsonArray("alipayPublicKeysPem").add(Sandbox.publicKeyPath("wechatpay-merchant"));
    app = TestApp.start(config);
  }

  @Override
  protected String channel() {
    return Sandbox.ALIPAY;
  }

  @Override
  protected Delivery paid(Payment p, long nowSeconds) {
    return Sandbox.alipay().notification(p, nowSeconds);
  }

  @Override
  protected Delivery notPaid(Payment p) {
    return paid(p.withStatus("WAIT_BUYER_PAY"), now());
  }

  @Override
  protected Delivery forged(Payment p) {
    Map<String, String> m = new LinkedHashMap<>(Sandbox.alipay().params(p));
    m.put("sign_type", "RSA2");
    m.put("sign", Base64.getEncoder().encodeToString(new byte[256]));
    return new Delivery(Map.of("Content-Type", "application/x-www-form-urlencoded"),
        AlipayGateway.encode(m, StandardCharsets.UTF_8).getBytes(StandardCharsets.US_ASCII));
  }

  @Override
  protected Delivery tampered(Payment p) {
    Delivery d = paid(p, now());
    return new Delivery(d.headers(), new String(d.body(), StandardCharsets.US_ASCII)
        .replace("total_amount=5.00", "total_amount=0.05").getBytes(StandardCharsets.US_ASCII));
  }

  @Override
  protected Delivery wrongKey(Payment p) {
    return new AlipayGateway(APP, Sandbox.privateKey("alipay-app"), StandardCharsets.UTF_8).notification(p, now());
  }

  @Override
  protected Delivery wrongApp(Payment p) {
    return new AlipayGateway("2021000000009999", Sandbox.privateKey("alipay"), StandardCharsets.UTF_8).notification(p, now());
  }

  @Override
  protected Delivery rotated(Payment p) {
    return new AlipayGateway(APP, Sandbox.privateKey("wechatpay-merchant"), StandardCharsets.UTF_8).notification(p, now());
  }

  @Override
  protected boolean signsTime() {
    return false;
  }

  @Override
  protected void assertSuccessAnswer(HttpResponse<Buffer> resp) {
    assertEquals(200, resp.statusCode());
    assertEquals("text/plain; charset=utf-8", resp.getHeader("Content-Type"));
    assertEquals("success", resp.bodyAsString());
  }

  @Override
  protected void assertFailureAnswer(HttpResponse<Buffer> resp, String code) {
    assertEquals(code.equals("MALFORMED") ? 400 : 401, resp.statusCode(), code);
    assertEquals("fail", resp.bodyAsString());
  }

  @Override
  protected void assertRetryAnswer(HttpResponse<Buffer> resp) {
    assertServerError(resp);
    assertEquals("fail", resp.bodyAsString());
  }

  @Test
  @Order(20)
  void aGbkNotificationVerifiesInItsOwnCharset() {
    Delivery d = new AlipayGateway(APP, Sandbox.privateKey("alipay"), Charset.forName("GBK"))
        .notification(payment("TXN1", AMOUNT), now());
    HttpResponse<Buffer> resp = send(d);
    assertSuccessAnswer(resp);
    assertEquals("APPLIED", resp.getHeader("X-Ordergate-Outcome"));
    assertEquals("ordergate 沙箱订单 O1", app.rows("SELECT payload FROM payment_notifications").get(0).getString(0)
        .replaceAll(".*subject=([^&]*).*", "$1").transform(s -> java.net.URLDecoder.decode(s, Charset.forName("GBK"))));
  }

  @Test
  @Order(21)
  void tradeFinishedAfterTradeSuccessIsTheSameReceipt() {
    Payment p = payment("TXN1", AMOUNT);
    assertEquals("APPLIED", send(paid(p, now())).getHeader("X-Ordergate-Outcome"));
    HttpResponse<Buffer> finished = send(paid(p.withStatus("TRADE_FINISHED"), now()));
    assertSuccessAnswer(finished);
    assertEquals("APPLIED,DUPLICATE", finished.getHeader("X-Ordergate-Outcome"));
    assertEquals(1, app.count("SELECT count(*) FROM payment_receipts"));
  }

  @Test
  @Order(22)
  void anAmountWithMoreThanTwoDecimalsIsRefused() {
    Map<String, String> m = new LinkedHashMap<>(Sandbox.alipay().params(payment("TXN1", AMOUNT)));
    m.put("total_amount", "5.001");
    HttpResponse<Buffer> resp = send(Sandbox.alipay().notification(m));
    assertFailureAnswer(resp, "MALFORMED");
    assertEquals(0, app.count("SELECT count(*) FROM payment_receipts"));
  }
}
