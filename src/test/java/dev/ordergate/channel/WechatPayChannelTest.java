package dev.ordergate.channel;

import dev.ordergate.channel.wechatpay.WechatPaySignature;
import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.Payment;
import dev.ordergate.sim.WechatPayGateway;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.BeforeAll;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WechatPayChannelTest extends ChannelContract {

  private static final String MCH = "1900000109";
  private static final String APP = "wxd678efh567hg6787";
  private static final byte[] KEY = "DEVONLY-sandbox-apiv3-key-000001".getBytes(StandardCharsets.UTF_8);
  private static final String KEY_ID = "PUB_KEY_ID_0000000000000000000000000000DEVONLY";

  @BeforeAll
  static void start() {
    JsonObject config = Sandbox.config();
    config.getJsonObject("payments").getJsonObject("channels").getJsonObject(Sandbox.WECHATPAY)
        .getJsonArray("platformKeys").add(new JsonObject().put("id", "5157F09EFDC096DE15EBE81A47057A7232F1B8E1")
            // A platform certificate (X.509, serial as the id) next to the public key: the migration period.
            .put("publicKeyPem", "src/test/resources/certs/platform-certificate.pem"));
    app = TestApp.start(config);
  }

  @Override
  protected String channel() {
    return Sandbox.WECHATPAY;
  }

  @Override
  protected Delivery paid(Payment p, long nowSeconds) {
    return Sandbox.wechatpay().notification(p, nowSeconds);
  }

  @Override
  protected Delivery notPaid(Payment p) {
    return Sandbox.wechatpay().notification("REFUND.SUCCESS", new JsonObject().put("mchid", MCH)
        .put("out_trade_no", p.orderNo()).put("transaction_id", p.txnId()).put("refund_id", "50000000382019052709732678859")
        .put("out_refund_no", "R1").put("refund_status", "SUCCESS")
        .put("amount", new JsonObject().put("total", p.amountCents()).put("refund", 1)), now());
  }

  @Override
  protected Delivery forged(Payment p) {
    Delivery d = paid(p, now());
    var headers = new LinkedHashMap<>(d.headers());
    headers.put(WechatPaySignature.SIGNATURE, "WECHATPAY/SIGNTEST/" + "A".repeat(40));
    return new Delivery(headers, d.body());
  }

  @Override
  protected Delivery tampered(Payment p) {
    Delivery d = paid(p, now());
    return new Delivery(d.headers(), new String(d.body(), StandardCharsets.UTF_8)
        .replace("encrypt-resource", "encrypt-resourcf").getBytes(StandardCharsets.UTF_8));
  }

  @Override
  protected Delivery wrongKey(Payment p) {
    return new WechatPayGateway(MCH, APP, KEY, KEY_ID, Sandbox.privateKey("wechatpay-merchant")).notification(p, now());
  }

  @Override
  protected Delivery wrongApp(Payment p) {
    return new WechatPayGateway("1900000999", APP, KEY, KEY_ID, Sandbox.privateKey("wechatpay-platform")).notification(p, now());
  }

  @Override
  protected Delivery undecryptable(Payment p) {
    return new WechatPayGateway(MCH, APP, "another-merchants-apiv3-key-0000".getBytes(StandardCharsets.UTF_8), KEY_ID,
        Sandbox.privateKey("wechatpay-platform")).notification(p, now());
  }

  @Override
  protected Delivery rotated(Payment p) {
    // The platform certificate's serial and the new public key's id are both configured (the migration).
    return new WechatPayGateway(MCH, APP, KEY, "5157F09EFDC096DE15EBE81A47057A7232F1B8E1", Sandbox.privateKey("alipay-app"))
        .notification(p, now());
  }

  @Override
  protected boolean signsTime() {
    return true;
  }

  @Override
  protected void assertSuccessAnswer(HttpResponse<Buffer> resp) {
    assertEquals(204, resp.statusCode(), resp.bodyAsString());
    assertTrue(resp.body() == null || resp.body().length() == 0, "no body");
  }

  @Override
  protected void assertFailureAnswer(HttpResponse<Buffer> resp, String code) {
    assertEquals(code.equals("UNDECRYPTABLE") ? 400 : 401, resp.statusCode(), code);
    assertFail(resp);
  }

  @Override
  protected void assertRetryAnswer(HttpResponse<Buffer> resp) {
    assertServerError(resp);
    assertFail(resp);
  }

  private static void assertFail(HttpResponse<Buffer> resp) {
    assertEquals("application/json", resp.getHeader("Content-Type"));
    JsonObject body = json(resp);
    assertEquals("FAIL", body.getString("code"));
    assertFalse(body.getString("message").isBlank());
    assertEquals(new JsonArray().add("code").add("message"), new JsonArray(body.fieldNames().stream().sorted().toList()));
  }
}
