package dev.ordergate.payment;

import com.alipay.api.internal.util.AlipaySignature;
import com.stripe.model.Event;
import com.stripe.net.ApiResource;
import com.stripe.net.Webhook;
import com.wechat.pay.java.core.auth.WechatPay2Credential;
import com.wechat.pay.java.core.auth.WechatPay2Validator;
import com.wechat.pay.java.core.cipher.RSASigner;
import com.wechat.pay.java.core.cipher.RSAVerifier;
import com.wechat.pay.java.core.http.HttpHeaders;
import com.wechat.pay.java.core.notification.NotificationParser;
import com.wechat.pay.java.core.notification.RSAPublicKeyNotificationConfig;
import com.wechat.pay.java.core.notification.RequestParam;
import com.wechat.pay.java.core.util.GsonUtil;
import com.wechat.pay.java.service.refund.model.RefundNotification;
import com.wechat.pay.java.service.refund.model.Status;
import dev.ordergate.channel.Pem;
import dev.ordergate.channel.alipay.AlipayClient;
import dev.ordergate.channel.alipay.AlipayProtocol;
import dev.ordergate.channel.wechatpay.WechatPayClient;
import dev.ordergate.channel.wechatpay.WechatPaySettings;
import dev.ordergate.channel.wechatpay.WechatPaySignature;
import dev.ordergate.config.AppConfig;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.StripeGateway;
import dev.ordergate.sim.TradeBook;
import dev.ordergate.support.Sandbox;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Our outbound signatures checked by the vendors' official SDKs (test scope only): wechatpay-java
 * builds the same WECHATPAY2-SHA256-RSA2048 Authorization for the same request, and its validator
 * accepts the simulator's signed answers; alipay-sdk-java builds the same sign content and verifies our
 * request {@code sign} and the simulator's response {@code sign}. Refunds: wechatpay-java builds the same
 * Authorization for our refund and refund-query requests, validates the simulator's signed refund answer, reads
 * it as its {@code Refund} model and parses the simulator's REFUND.SUCCESS notification; alipay-sdk-java verifies
 * our {@code alipay.trade.refund} sign and the simulator's refund answers; stripe-java reads the simulator's
 * refund as its {@code Refund} model and verifies its refund webhook.
 */
class OutboundSdkInteropTest {

  private static final Pattern FIELD = Pattern.compile("(\\w+)=\"([^\"]*)\"");
  private static final String KEY_ID = "PUB_KEY_ID_0000000000000000000000000000DEVONLY";
  private static final PublicKey PLATFORM = Pem.publicKey("conf/sandbox/wechatpay-platform-public.pem", "platform");
  private static Map<String, ChannelConfig> channels;
  private static GatewaySim sim;

  @BeforeAll
  static void load() {
    sim = new GatewaySim();
    channels = AppConfig.from(sim.serviceConfig(new JsonObject())).channels();
  }

  @AfterAll
  static void stop() {
    sim.close();
  }

  private static Map<String, String> fields(String authorization) {
    Map<String, String> out = new HashMap<>();
    Matcher m = FIELD.matcher(authorization);
    while (m.find()) {
      out.put(m.group(1), m.group(2));
    }
    return out;
  }

  @Test
  void wechatPaySdkBuildsTheSameAuthorizationAndAcceptsTheSimulatorsSignedAnswers() {
    ChannelConfig config = channels.get(Sandbox.WECHATPAY);
    WechatPaySettings s = (WechatPaySettings) config.settings();
    WechatPayClient ours = new WechatPayClient(config, null, Clock.systemUTC());
    WechatPay2Credential sdk = new WechatPay2Credential(s.mchId(), new RSASigner(s.merchantSerialNo(), s.merchantPrivateKey()));
    String[][] requests = {
        {"POST", "https://api.mch.weixin.qq.com/v3/pay/transactions/native",
            "{\"appid\":\"wxd678efh567hg6787\",\"mchid\":\"1900000109\",\"description\":\"订单 X1\",\"out_trade_no\":\"X1\"}"},
        {"GET", "https://api.mch.weixin.qq.com/v3/pay/transactions/out-trade-no/X1?mchid=1900000109", ""},
        {"POST", "https://api.mch.weixin.qq.com/v3/pay/transactions/out-trade-no/X1/close", "{\"mchid\":\"1900000109\"}"}};
    for (String[] r : requests) {
      URI uri = URI.create(r[1]);
      Map<String, String> theirs = fields(sdk.getAuthorization(uri, r[0], r[2]));
      String path = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
      Map<String, String> mine = fields(ours.authorization(r[0], path, theirs.get("timestamp"), theirs.get("nonce_str"),
          r[2].getBytes(StandardCharsets.UTF_8)));
      assertEquals(theirs, mine, r[0] + " " + path + ": same mchid, serial_no, nonce, timestamp and signature");
    }
    // The simulator accepts the SDK's Authorization, and the SDK's validator accepts the simulator's answer.
    String url = sim.url() + "/wechatpay/v3/pay/transactions/out-trade-no/UNKNOWN1?mchid=1900000109";
    var resp = sim.http.getAbs(url).putHeader("Authorization", sdk.getAuthorization(URI.create(url), "GET", "")).send().await();
    assertEquals(404, resp.statusCode(), resp.bodyAsString());
    assertEquals("ORDER_NOT_EXIST", resp.bodyAsJsonObject().getString("code"));
    HttpHeaders headers = new HttpHeaders();
    resp.headers().forEach(h -> headers.addHeader(h.getKey(), h.getValue()));
    WechatPay2Validator validator = new WechatPay2Validator(new RSAVerifier(
        Pem.publicKey("conf/sandbox/wechatpay-platform-public.pem", "platform"), "PUB_KEY_ID_0000000000000000000000000000DEVONLY"));
    assertTrue(validator.validate(headers, resp.bodyAsString()), "wechatpay-java validates the simulator's signed answer");
    assertFalse(validator.validate(headers, resp.bodyAsString().replace("ORDER", "0RDER")), "and refuses a tampered one");
  }

  private static String publicKeyBase64(String file) throws Exception {
    return Files.readString(Path.of(file)).replaceAll("(?s).*-----BEGIN PUBLIC KEY-----", "")
        .replaceAll("(?s)-----END PUBLIC KEY-----.*", "").replaceAll("\\s", "");
  }

  @Test
  void alipaySdkVerifiesOurRequestSignAndTheSimulatorsResponseSign() throws Exception {
    AlipayClient ours = new AlipayClient(channels.get(Sandbox.ALIPAY), null, Clock.systemUTC());
    Map<String, String> params = ours.signedParams("alipay.trade.precreate", new JsonObject()
        .put("out_trade_no", "X1").put("total_amount", "12.30").put("subject", "订单 X1").put("time_expire", "2026-12-01 18:30:00"));
    Map<String, String> unsigned = new HashMap<>(params);
    String sign = unsigned.remove("sign");
    assertEquals(AlipaySignature.getSignContent(unsigned), AlipayProtocol.requestContent(params));
    assertTrue(AlipaySignature.rsaCheck(AlipaySignature.getSignContent(unsigned), sign,
        publicKeyBase64("conf/sandbox/alipay-app-public.pem"), "utf-8", "RSA2"), "alipay-sdk-java verifies our request sign");
    assertFalse(AlipaySignature.rsaCheck(AlipaySignature.getSignContent(unsigned).replace("12.30", "12.31"), sign,
        publicKeyBase64("conf/sandbox/alipay-app-public.pem"), "utf-8", "RSA2"));
    String answer = Sandbox.alipay().answer("alipay_trade_query_response",
        new JsonObject().put("code", "10000").put("msg", "Success").put("trade_status", "WAIT_BUYER_PAY"));
    String node = AlipayProtocol.responseNode(answer, "alipay_trade_query_response");
    assertTrue(AlipaySignature.rsaCheck(node, new JsonObject(answer).getString("sign"),
        publicKeyBase64("conf/sandbox/alipay-public.pem"), "utf-8", "RSA2"), "alipay-sdk-java verifies the simulator's answer");
  }

  // ---- refunds (issue 10) ---------------------------------------------------------------------

  /** A paid trade in the simulator's book; answers its txn id. */
  private static String paidTrade(String kind, String ref, long cents) {
    sim.apis.trades().create(kind, ref, ref, cents, "CNY", null, null, "x", TradeBook.State.OPEN);
    String txn = kind.equals("stripe") ? ref : "4200" + Math.abs(ref.hashCode());
    sim.apis.trades().pay(kind, ref, txn);
    return txn;
  }

  @Test
  void wechatPaySdkSignsOurRefundRequestsTheSameAndReadsTheSimulatorsRefundAnswerAndNotification() {
    ChannelConfig config = channels.get(Sandbox.WECHATPAY);
    WechatPaySettings s = (WechatPaySettings) config.settings();
    WechatPayClient ours = new WechatPayClient(config, null, Clock.systemUTC());
    WechatPay2Credential sdk = new WechatPay2Credential(s.mchId(), new RSASigner(s.merchantSerialNo(), s.merchantPrivateKey()));
    String refundId = UUID.randomUUID().toString();
    String txn = paidTrade("wechatpay-v3", "SDKR" + refundId.substring(0, 8), 700);
    String body = new JsonObject().put("transaction_id", txn).put("out_refund_no", refundId).put("reason", "LATE_AFTER_CANCEL")
        .put("notify_url", "http://127.0.0.1:1/n")
        .put("amount", new JsonObject().put("refund", 700).put("total", 700).put("currency", "CNY")).encode();
    String[][] requests = {
        {"POST", sim.url() + "/wechatpay/v3/refund/domestic/refunds", body},
        {"GET", sim.url() + "/wechatpay/v3/refund/domestic/refunds/" + refundId, ""}};
    for (String[] r : requests) {
      URI uri = URI.create(r[1]);
      String authorization = sdk.getAuthorization(uri, r[0], r[2]);
      Map<String, String> theirs = fields(authorization);
      Map<String, String> mine = fields(ours.authorization(r[0], uri.getRawPath(), theirs.get("timestamp"),
          theirs.get("nonce_str"), r[2].getBytes(StandardCharsets.UTF_8)));
      assertEquals(theirs, mine, r[0] + " " + uri.getRawPath() + ": same Authorization");
      // The simulator accepts the SDK's request; the SDK's validator accepts the simulator's answer and reads it.
      var req = r[0].equals("POST") ? sim.http.postAbs(r[1]) : sim.http.getAbs(r[1]);
      req.putHeader("Authorization", authorization).putHeader("Content-Type", "application/json");
      var resp = (r[0].equals("POST") ? req.sendBuffer(Buffer.buffer(r[2])) : req.send()).await();
      assertEquals(200, resp.statusCode(), resp.bodyAsString());
      HttpHeaders headers = new HttpHeaders();
      resp.headers().forEach(h -> headers.addHeader(h.getKey(), h.getValue()));
      WechatPay2Validator validator = new WechatPay2Validator(new RSAVerifier(PLATFORM, KEY_ID));
      assertTrue(validator.validate(headers, resp.bodyAsString()), "wechatpay-java validates the refund answer");
      assertFalse(validator.validate(headers, resp.bodyAsString().replace("SUCCESS", "ABNORMAL")));
      var refund = GsonUtil.getGson().fromJson(resp.bodyAsString(), com.wechat.pay.java.service.refund.model.Refund.class);
      assertEquals(Status.SUCCESS, refund.getStatus());
      assertEquals(refundId, refund.getOutRefundNo());
      assertEquals(txn, refund.getTransactionId());
      assertEquals(700L, refund.getAmount().getRefund());
    }
    assertEquals(1, sim.apis.trades().refundCount("wechatpay-v3", "SDKR" + refundId.substring(0, 8)), "the repeat refunded nothing");

    TradeBook.Refund made = sim.apis.trades().refundOf("wechatpay-v3", refundId);
    Delivery d = Sandbox.wechatpay().refundNotification(made, "SUCCESS", System.currentTimeMillis() / 1000);
    NotificationParser parser = new NotificationParser(new RSAPublicKeyNotificationConfig.Builder()
        .publicKey(PLATFORM).publicKeyId(KEY_ID).apiV3Key("DEVONLY-sandbox-apiv3-key-000001").build());
    RequestParam param = new RequestParam.Builder().serialNumber(d.headers().get(WechatPaySignature.SERIAL))
        .nonce(d.headers().get(WechatPaySignature.NONCE)).signature(d.headers().get(WechatPaySignature.SIGNATURE))
        .timestamp(d.headers().get(WechatPaySignature.TIMESTAMP)).signType(d.headers().get(WechatPaySignature.SIGNATURE_TYPE))
        .body(new String(d.body(), StandardCharsets.UTF_8)).build();
    RefundNotification n = parser.parse(param, RefundNotification.class);
    assertEquals(Status.SUCCESS, n.getRefundStatus());
    assertEquals(refundId, n.getOutRefundNo());
    assertEquals(made.gatewayRefundId, n.getRefundId());
  }

  @Test
  void alipaySdkVerifiesOurRefundRequestSignAndTheSimulatorsRefundAnswer() throws Exception {
    AlipayClient ours = new AlipayClient(channels.get(Sandbox.ALIPAY), null, Clock.systemUTC());
    String refundId = UUID.randomUUID().toString();
    String txn = paidTrade("alipay", "SDKA" + refundId.substring(0, 8), 1230);
    Map<String, String> params = ours.signedParams("alipay.trade.refund", new JsonObject().put("trade_no", txn)
        .put("refund_amount", "12.30").put("out_request_no", refundId).put("refund_reason", "LATE_AFTER_CANCEL"));
    Map<String, String> unsigned = new HashMap<>(params);
    String sign = unsigned.remove("sign");
    String appPublic = publicKeyBase64("conf/sandbox/alipay-app-public.pem");
    assertEquals(AlipaySignature.getSignContent(unsigned), AlipayProtocol.requestContent(params));
    assertTrue(AlipaySignature.rsaCheck(AlipaySignature.getSignContent(unsigned), sign, appPublic, "utf-8", "RSA2"),
        "alipay-sdk-java verifies our refund request sign");
    assertFalse(AlipaySignature.rsaCheck(AlipaySignature.getSignContent(unsigned).replace("12.30", "123.0"), sign,
        appPublic, "utf-8", "RSA2"));
    StringBuilder form = new StringBuilder();
    params.forEach((k, v) -> form.append(form.length() == 0 ? "" : "&").append(k).append('=')
        .append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
    for (String fundChange : new String[] {"Y", "N"}) {
      String answer = sim.http.postAbs(sim.url() + "/alipay/gateway.do")
          .putHeader("Content-Type", "application/x-www-form-urlencoded;charset=utf-8")
          .sendBuffer(Buffer.buffer(form.toString())).await().bodyAsString();
      String node = AlipayProtocol.responseNode(answer, "alipay_trade_refund_response");
      assertTrue(AlipaySignature.rsaCheck(node, new JsonObject(answer).getString("sign"),
          publicKeyBase64("conf/sandbox/alipay-public.pem"), "utf-8", "RSA2"), "alipay-sdk-java verifies the refund answer");
      assertEquals("10000", new JsonObject(node).getString("code"), node);
      assertEquals(fundChange, new JsonObject(node).getString("fund_change"), "the repeat moves no money: " + node);
    }
    assertEquals(1, sim.apis.trades().refundCount("alipay", "SDKA" + refundId.substring(0, 8)));
  }

  @Test
  void stripeSdkReadsTheSimulatorsRefundAndVerifiesItsRefundWebhook() throws Exception {
    String pi = "pi_simsdk" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    paidTrade("stripe", pi, 900);
    String refundId = UUID.randomUUID().toString();
    String form = "payment_intent=" + pi + "&amount=900&reason=requested_by_customer&metadata%5BrefundId%5D=" + refundId
        + "&metadata%5BorderNo%5D=" + pi;
    String[] bodies = new String[2];
    for (int i = 0; i < 2; i++) {
      var resp = sim.http.postAbs(sim.url() + "/stripe/v1/refunds")
          .putHeader("Authorization", "Bearer sk_test_DEVELOPMENT_ONLY_sandbox_0000000000000000")
          .putHeader("Content-Type", "application/x-www-form-urlencoded").putHeader("Idempotency-Key", refundId)
          .sendBuffer(Buffer.buffer(form)).await();
      assertEquals(200, resp.statusCode(), resp.bodyAsString());
      bodies[i] = resp.bodyAsString();
    }
    assertEquals(bodies[0], bodies[1], "the Idempotency-Key replays the first answer");
    com.stripe.model.Refund refund = ApiResource.GSON.fromJson(bodies[0], com.stripe.model.Refund.class);
    assertEquals("succeeded", refund.getStatus());
    assertEquals(refundId, refund.getMetadata().get("refundId"));
    assertEquals(pi, refund.getPaymentIntent());
    assertEquals(900L, refund.getAmount());
    assertEquals(1, sim.apis.trades().refundCount("stripe", pi));

    long now = System.currentTimeMillis() / 1000;
    Delivery d = Sandbox.stripe().notification(StripeGateway.event("refund.updated", new JsonObject(bodies[0]), now), now);
    String payload = new String(d.body(), StandardCharsets.UTF_8);
    String secret = "whsec_DEVELOPMENT_ONLY_sandbox_0000000000000000";
    Event e = Webhook.constructEvent(payload, d.headers().get("Stripe-Signature"), secret);
    assertEquals("refund.updated", e.getType());
    com.stripe.model.Refund inEvent = (com.stripe.model.Refund) e.getDataObjectDeserializer().deserializeUnsafe();
    assertEquals(refundId, inEvent.getMetadata().get("refundId"));
    assertThrows(com.stripe.exception.SignatureVerificationException.class,
        () -> Webhook.constructEvent(payload.replace("succeeded", "failed"), d.headers().get("Stripe-Signature"), secret));
  }
}
