package dev.ordergate.channel;

import com.alipay.api.internal.util.AlipaySignature;
import com.stripe.model.Event;
import com.stripe.net.Webhook;
import com.wechat.pay.java.core.cipher.AeadAesCipher;
import com.wechat.pay.java.core.cipher.RSASigner;
import com.wechat.pay.java.core.notification.NotificationParser;
import com.wechat.pay.java.core.notification.RSAPublicKeyNotificationConfig;
import com.wechat.pay.java.core.notification.RequestParam;
import com.wechat.pay.java.service.payments.model.Transaction;
import dev.ordergate.channel.alipay.AlipayForm;
import dev.ordergate.channel.wechatpay.WechatPaySignature;
import dev.ordergate.config.AppConfig;
import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.Payment;
import dev.ordergate.support.Sandbox;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Interoperability against code nobody here wrote: each gateway's official SDK (test scope only)
 * produces a notification our channel must accept, and verifies what our simulator sends. A
 * change to our signed strings, key handling or AEAD framing that drifts from the gateway's
 * breaks one side of these.
 */
class SdkInteropTest {

  private static final AppConfig CONFIG = AppConfig.from(Sandbox.config());
  private static final String MCH = "1900000109";
  private static final String APP = "wxd678efh567hg6787";
  private static final String API_V3_KEY = "DEVONLY-sandbox-apiv3-key-000001";
  private static final String KEY_ID = "PUB_KEY_ID_0000000000000000000000000000DEVONLY";

  /**
   * Loaded by our Pem: the SDK's PemUtil refuses the "DEVELOPMENT ONLY" text line above the PEM block
   * (RFC 7468 allows explanatory text there), so its path loader cannot read the sandbox files.
   */
  private static final java.security.PublicKey PLATFORM_PUBLIC =
      Pem.publicKey(Sandbox.publicKeyPath("wechatpay-platform"), "wechatpay-platform");

  private static PaymentChannel channel(String name) {
    return Channels.of(CONFIG.channels().get(name), Clock.systemUTC());
  }

  private static Inbound inbound(Map<String, String> headers, byte[] body) {
    Map<String, String> lower = new HashMap<>();
    headers.forEach((k, v) -> lower.put(k.toLowerCase(), v));
    return new Inbound(body, name -> lower.get(name.toLowerCase()));
  }

  private static long now() {
    return System.currentTimeMillis() / 1000;
  }

  // ---- WeChat Pay: com.github.wechatpay-apiv3:wechatpay-java --------------------------------

  @Test
  void wechatPayNotificationSignedAndEncryptedByTheSdkIsAcceptedByOurChannel() {
    JsonObject transaction = new JsonObject().put("mchid", MCH).put("appid", APP).put("out_trade_no", "O-SDK-1")
        .put("transaction_id", "4200000000000000001").put("trade_state", "SUCCESS").put("trade_type", "NATIVE")
        .put("amount", new JsonObject().put("total", 1234).put("payer_total", 1234).put("currency", "CNY"));
    String nonce = "sdknonce0001";
    String ciphertext = new AeadAesCipher(API_V3_KEY.getBytes(StandardCharsets.UTF_8)).encrypt(
        "transaction".getBytes(StandardCharsets.UTF_8), nonce.getBytes(StandardCharsets.UTF_8),
        transaction.encode().getBytes(StandardCharsets.UTF_8));
    String body = new JsonObject().put("id", "EV-SDK-1").put("create_time", "2026-12-01T10:00:00+08:00")
        .put("resource_type", "encrypt-resource").put("event_type", "TRANSACTION.SUCCESS").put("summary", "支付成功")
        .put("resource", new JsonObject().put("original_type", "transaction").put("algorithm", "AEAD_AES_256_GCM")
            .put("ciphertext", ciphertext).put("associated_data", "transaction").put("nonce", nonce)).encode();
    String ts = Long.toString(now());
    String headerNonce = "5K8264ILTKCH16CQ2502SI8ZNMTM67VS";
    String signature = new RSASigner(KEY_ID, Sandbox.privateKey("wechatpay-platform"))
        .sign(ts + "\n" + headerNonce + "\n" + body + "\n").getSign();
    Notification n = channel(Sandbox.WECHATPAY).receive(inbound(Map.of(WechatPaySignature.SIGNATURE, signature,
        WechatPaySignature.SERIAL, KEY_ID, WechatPaySignature.TIMESTAMP, ts, WechatPaySignature.NONCE, headerNonce),
        body.getBytes(StandardCharsets.UTF_8)));
    assertTrue(n.isPayment());
    assertEquals("EV-SDK-1", n.notificationId());
    assertEquals("4200000000000000001", n.callback().txnId());
    assertEquals("O-SDK-1", n.callback().orderNo());
    assertEquals(1234, n.callback().amountCents());
    assertEquals("CNY", n.callback().currency());
  }

  @Test
  void theSdksNotificationParserAcceptsTheSimulatorsNotification() {
    Delivery d = Sandbox.wechatpay().notification(new Payment("O-SIM-1", "4200000000000000002", 4321, "CNY", null), now());
    NotificationParser parser = new NotificationParser(new RSAPublicKeyNotificationConfig.Builder()
        .publicKey(PLATFORM_PUBLIC).publicKeyId(KEY_ID).apiV3Key(API_V3_KEY).build());
    Transaction t = parser.parse(new RequestParam.Builder()
        .serialNumber(d.headers().get(WechatPaySignature.SERIAL)).nonce(d.headers().get(WechatPaySignature.NONCE))
        .signature(d.headers().get(WechatPaySignature.SIGNATURE)).timestamp(d.headers().get(WechatPaySignature.TIMESTAMP))
        .signType(d.headers().get(WechatPaySignature.SIGNATURE_TYPE))
        .body(new String(d.body(), StandardCharsets.UTF_8)).build(), Transaction.class);
    assertEquals("O-SIM-1", t.getOutTradeNo());
    assertEquals("4200000000000000002", t.getTransactionId());
    assertEquals(4321, t.getAmount().getTotal());
    assertEquals(Transaction.TradeStateEnum.SUCCESS, t.getTradeState());
    assertEquals(MCH, t.getMchid());
  }

  @Test
  void theSdksNotificationParserRejectsWhatOurChannelRejects() {
    Delivery d = Sandbox.wechatpay().notification(new Payment("O-SIM-1", "4200000000000000002", 4321, "CNY", null), now());
    String tampered = new String(d.body(), StandardCharsets.UTF_8).replace("encrypt-resource", "encrypt-resourcf");
    NotificationParser parser = new NotificationParser(new RSAPublicKeyNotificationConfig.Builder()
        .publicKey(PLATFORM_PUBLIC).publicKeyId(KEY_ID).apiV3Key(API_V3_KEY).build());
    assertThrows(RuntimeException.class, () -> parser.parse(new RequestParam.Builder()
        .serialNumber(KEY_ID).nonce(d.headers().get(WechatPaySignature.NONCE))
        .signature(d.headers().get(WechatPaySignature.SIGNATURE)).timestamp(d.headers().get(WechatPaySignature.TIMESTAMP))
        .body(tampered).build(), Transaction.class));
    assertThrows(ChannelRejection.class, () -> channel(Sandbox.WECHATPAY).receive(inbound(d.headers(),
        tampered.getBytes(StandardCharsets.UTF_8))));
  }

  // ---- Alipay: com.alipay.sdk:alipay-sdk-java --------------------------------------------------

  private static String bareBase64(String pemPath) throws Exception {
    return Files.readString(Path.of(pemPath)).replaceAll("(?s).*-----BEGIN [A-Z ]+-----|-----END [A-Z ]+-----.*", "")
        .replaceAll("\\s", "");
  }

  @Test
  void alipayNotifySignedByTheSdkIsAcceptedByOurChannel() throws Exception {
    Map<String, String> params = new TreeMap<>(Sandbox.alipay().params(new Payment("O-SDK-2", "2026120122001400001", 1999, "CNY", null)));
    params.put("body", "含 & 和 = 的说明");
    String sign = AlipaySignature.rsaSign(AlipaySignature.getSignCheckContentV1(new HashMap<>(params)),
        bareBase64("conf/sandbox/alipay-private.pem"), "utf-8", "RSA2");
    params.put("sign", sign);
    params.put("sign_type", "RSA2");
    byte[] body = dev.ordergate.sim.AlipayGateway.encode(params, StandardCharsets.UTF_8).getBytes(StandardCharsets.US_ASCII);
    Notification n = channel(Sandbox.ALIPAY).receive(inbound(Map.of("Content-Type", "application/x-www-form-urlencoded"), body));
    assertTrue(n.isPayment());
    assertEquals("2026120122001400001", n.callback().txnId());
    assertEquals(1999, n.callback().amountCents());
    assertEquals(params.get("notify_id"), n.notificationId());
  }

  @Test
  void theSdksRsaCheckV1AcceptsTheSimulatorsNotify() throws Exception {
    Delivery d = Sandbox.alipay().notification(new Payment("O-SIM-2", "2026120122001400002", 5, "CNY", null), now());
    Map<String, String> params = new HashMap<>(AlipayForm.parse(d.body(), null).params());
    String key = bareBase64(Sandbox.publicKeyPath("alipay"));
    assertTrue(AlipaySignature.rsaCheckV1(new HashMap<>(params), key, "utf-8", "RSA2"));
    params.put("total_amount", "0.06");
    assertFalse(AlipaySignature.rsaCheckV1(params, key, "utf-8", "RSA2"));
  }

  @Test
  void theSdkAndOurChannelSignTheSameContent() {
    Map<String, String> params = new HashMap<>(Map.of("b", "2", "a", "1", "sign", "x", "sign_type", "RSA2", "e", ""));
    assertEquals(AlipaySignature.getSignCheckContentV1(new HashMap<>(params)),
        dev.ordergate.channel.alipay.AlipaySignature.content(params));
  }

  // ---- Stripe: com.stripe:stripe-java ----------------------------------------------------------

  private static final String WHSEC = "whsec_DEVELOPMENT_ONLY_sandbox_0000000000000000";

  @Test
  void stripeSignatureComputedByTheSdkIsAcceptedByOurChannel() throws Exception {
    long t = now();
    String body = "{\n  \"id\": \"evt_sdk_1\",\n  \"object\": \"event\",\n  \"type\": \"payment_intent.succeeded\",\n"
        + "  \"data\": {\"object\": {\"id\": \"pi_sdk_1\", \"object\": \"payment_intent\", \"amount_received\": 700,"
        + " \"currency\": \"cny\", \"metadata\": {\"orderNo\": \"O-SDK-3\"}}}\n}";
    String header = "t=" + t + ",v1=" + Webhook.Util.computeHmacSha256(WHSEC, t + "." + body);
    Notification n = channel(Sandbox.STRIPE).receive(inbound(Map.of("Stripe-Signature", header),
        body.getBytes(StandardCharsets.UTF_8)));
    assertEquals("evt_sdk_1", n.notificationId());
    assertEquals("pi_sdk_1", n.callback().txnId());
    assertEquals(700, n.callback().amountCents());
    assertEquals("CNY", n.callback().currency());
  }

  @Test
  void theSdksConstructEventAcceptsTheSimulatorsWebhook() throws Exception {
    Delivery d = Sandbox.stripe().notification(new Payment("O-SIM-3", "pi_sim_3", 800, "CNY", null), now());
    String payload = new String(d.body(), StandardCharsets.UTF_8);
    Event e = Webhook.constructEvent(payload, d.headers().get("Stripe-Signature"), WHSEC);
    assertEquals("payment_intent.succeeded", e.getType());
    assertTrue(e.getId().startsWith("evt_"));
    assertThrows(com.stripe.exception.SignatureVerificationException.class,
        () -> Webhook.constructEvent(payload.replace("800", "801"), d.headers().get("Stripe-Signature"), WHSEC));
  }
}
