package dev.ordergate.sim;

import dev.ordergate.channel.wechatpay.WechatPayCipher;
import dev.ordergate.channel.wechatpay.WechatPaySignature;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * WeChat Pay API v3 as it notifies: a JSON envelope whose {@code resource} is the Transaction,
 * AEAD_AES_256_GCM-encrypted with the merchant's APIv3 key, signed SHA256withRSA by the platform key
 * {@code keyId} over {@code timestamp\nnonce\nbody\n}.
 */
public final class WechatPayGateway implements Gateway {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final String mchId;
  private final String appId;
  private final byte[] apiV3Key;
  private final String keyId;
  private final PrivateKey platformKey;

  public WechatPayGateway(String mchId, String appId, byte[] apiV3Key, String keyId, PrivateKey platformKey) {
    this.mchId = mchId;
    this.appId = appId;
    this.apiV3Key = apiV3Key;
    this.keyId = keyId;
    this.platformKey = platformKey;
  }

  @Override
  public String kind() {
    return "wechatpay-v3";
  }

  /** The decrypted resource of a TRANSACTION.SUCCESS notification ({@code trade_state} = status or SUCCESS). */
  public JsonObject transaction(Payment p) {
    return new JsonObject()
        .put("mchid", mchId).put("appid", appId)
        .put("out_trade_no", p.orderNo()).put("transaction_id", p.txnId())
        .put("trade_type", "NATIVE").put("trade_state", p.status() == null ? "SUCCESS" : p.status())
        .put("trade_state_desc", "支付成功").put("bank_type", "OTHERS").put("attach", "")
        .put("success_time", DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(Instant.now().atOffset(ZoneOffset.ofHours(8))))
        .put("payer", new JsonObject().put("openid", "oSandboxPayer0000000000000000"))
        .put("amount", new JsonObject().put("total", p.amountCents()).put("payer_total", p.amountCents())
            .put("currency", p.currency()).put("payer_currency", p.currency()));
  }

  @Override
  public Delivery notification(Payment p, long nowSeconds) {
    return notification("TRANSACTION.SUCCESS", transaction(p), nowSeconds);
  }

  public Delivery notification(String eventType, JsonObject resource, long nowSeconds) {
    return notification(eventType, "transaction", "支付成功", resource, nowSeconds);
  }

  /**
   * A refund result notification ({@code REFUND.SUCCESS}, {@code REFUND.ABNORMAL}, {@code REFUND.CLOSED}):
   * the resource (original_type and associated_data {@code refund}) names out_refund_no, refund_id,
   * refund_status and the amounts.
   */
  public Delivery refundNotification(TradeBook.Refund r, String refundStatus, long nowSeconds) {
    JsonObject resource = new JsonObject().put("mchid", mchId).put("out_trade_no", r.tradeRef)
        .put("transaction_id", r.txnId).put("out_refund_no", r.refundId).put("refund_id", r.gatewayRefundId)
        .put("refund_status", refundStatus).put("user_received_account", "支付用户零钱")
        .put("amount", new JsonObject().put("total", r.amountCents).put("refund", r.amountCents)
            .put("payer_total", r.amountCents).put("payer_refund", r.amountCents));
    if ("SUCCESS".equals(refundStatus)) {
      resource.put("success_time", DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(Instant.now().atOffset(ZoneOffset.ofHours(8))));
    }
    return notification("REFUND." + refundStatus, "refund", "退款" + refundStatus, resource, nowSeconds);
  }

  private Delivery notification(String eventType, String originalType, String summary, JsonObject resource,
                                long nowSeconds) {
    String nonce = random(6);
    String aad = originalType;
    JsonObject envelope = new JsonObject()
        .put("id", "EV-" + random(12))
        .put("create_time", DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(Instant.now().atOffset(ZoneOffset.ofHours(8))))
        .put("resource_type", "encrypt-resource").put("event_type", eventType).put("summary", summary)
        .put("resource", new JsonObject().put("original_type", originalType).put("algorithm", "AEAD_AES_256_GCM")
            .put("ciphertext", WechatPayCipher.encrypt(apiV3Key, nonce, aad, resource.encode().getBytes(StandardCharsets.UTF_8)))
            .put("associated_data", aad).put("nonce", nonce));
    return signed(envelope.encode().getBytes(StandardCharsets.UTF_8), nowSeconds);
  }

  /** Headers for {@code body} as WeChat Pay signs it. */
  public Delivery signed(byte[] body, long nowSeconds) {
    String ts = Long.toString(nowSeconds);
    String nonce = random(16);
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Content-Type", "application/json");
    headers.put(WechatPaySignature.TIMESTAMP, ts);
    headers.put(WechatPaySignature.NONCE, nonce);
    headers.put(WechatPaySignature.SERIAL, keyId);
    headers.put(WechatPaySignature.SIGNATURE_TYPE, WechatPaySignature.RSA_TYPE);
    headers.put(WechatPaySignature.SIGNATURE, WechatPaySignature.sign(platformKey, ts, nonce, body));
    return new Delivery(headers, body);
  }

  @Override
  public boolean accepted(int status, String body) {
    return status == 200 || status == 204;
  }

  /** 15s,15s,30s,3m,10m,20m,30m,30m,30m,60m,3h,3h,3h,6h,6h (WeChat Pay's documented schedule). */
  @Override
  public List<Duration> retrySchedule() {
    return List.of(Duration.ofSeconds(15), Duration.ofSeconds(15), Duration.ofSeconds(30), Duration.ofMinutes(3),
        Duration.ofMinutes(10), Duration.ofMinutes(20), Duration.ofMinutes(30), Duration.ofMinutes(30),
        Duration.ofMinutes(30), Duration.ofMinutes(60), Duration.ofHours(3), Duration.ofHours(3), Duration.ofHours(3),
        Duration.ofHours(6), Duration.ofHours(6));
  }

  static String random(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b).toUpperCase();
  }
}
