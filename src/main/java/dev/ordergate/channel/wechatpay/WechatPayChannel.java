package dev.ordergate.channel.wechatpay;

import dev.ordergate.channel.Answer;
import dev.ordergate.channel.BaseChannel;
import dev.ordergate.channel.ChannelRejection;
import dev.ordergate.channel.Fields;
import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.Inbound;
import dev.ordergate.channel.Notification;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.time.Clock;

/**
 * WeChat Pay API v3 payment notifications. Order of checks: the four signature headers, the key the
 * serial names, the timestamp (5 minutes by default, both ways), SHA256withRSA over the raw body;
 * only then the envelope is parsed and {@code resource} decrypted, and {@code mchid} / {@code appid}
 * must be ours. {@code TRANSACTION.SUCCESS} with {@code trade_state=SUCCESS} is a payment (txn =
 * {@code transaction_id}, order = {@code out_trade_no}, amount = {@code amount.total} in fen); any
 * other verified event is recorded only. Answers: 204 when processed; 4xx/5xx with
 * {@code {"code":"FAIL","message":...}} otherwise.
 */
public final class WechatPayChannel extends BaseChannel<WechatPaySettings> {

  public static final String PAID_EVENT = "TRANSACTION.SUCCESS";

  public WechatPayChannel(ChannelConfig config, Clock clock) {
    super(config, clock);
  }

  @Override
  public Notification receive(Inbound request) {
    String signature = request.header(WechatPaySignature.SIGNATURE);
    String serial = request.header(WechatPaySignature.SERIAL);
    String timestamp = request.header(WechatPaySignature.TIMESTAMP);
    String nonce = request.header(WechatPaySignature.NONCE);
    if (signature == null || serial == null || timestamp == null || nonce == null) {
      throw ChannelRejection.badSignature("Wechatpay-Signature, -Serial, -Timestamp and -Nonce are required");
    }
    String type = request.header(WechatPaySignature.SIGNATURE_TYPE);
    if (type != null && !type.equals(WechatPaySignature.RSA_TYPE)) {
      throw ChannelRejection.badSignature("unsupported Wechatpay-Signature-Type");
    }
    PublicKey key = settings.platformKeys().get(serial);
    if (key == null) {
      throw ChannelRejection.badSignature("Wechatpay-Serial names no configured platform key");
    }
    if (!WechatPaySignature.fresh(timestamp, clock.instant().getEpochSecond(), config.toleranceSeconds())) {
      throw ChannelRejection.badSignature("Wechatpay-Timestamp is outside the time tolerance");
    }
    if (!WechatPaySignature.verify(key, timestamp, nonce, request.body(), signature)) {
      throw ChannelRejection.badSignature("signature does not verify");
    }
    JsonObject envelope = Fields.object(request.body());
    String id = Fields.string(envelope, "id", 64, true);
    String eventType = Fields.string(envelope, "event_type", 64, true);
    JsonObject resource = Fields.object(envelope, "resource");
    if (!"AEAD_AES_256_GCM".equals(resource.getValue("algorithm"))) {
      throw ChannelRejection.undecryptable("resource.algorithm must be AEAD_AES_256_GCM");
    }
    String plaintext;
    try {
      plaintext = new String(WechatPayCipher.decrypt(settings.apiV3Key(),
          Fields.string(resource, "nonce", 64, true), resource.getValue("associated_data") instanceof String s ? s : null,
          Fields.string(resource, "ciphertext", 65536, true)), StandardCharsets.UTF_8);
    } catch (GeneralSecurityException e) {
      throw ChannelRejection.undecryptable("resource does not decrypt with the APIv3 key");
    }
    JsonObject data = Fields.object(plaintext.getBytes(StandardCharsets.UTF_8));
    Object mchid = data.getValue("mchid");
    if (mchid != null && !settings.mchId().equals(mchid)) {
      throw ChannelRejection.wrongMerchant("mchid is not this channel's merchant");
    }
    Object appid = data.getValue("appid");
    if (appid != null && !settings.appId().equals(appid)) {
      throw ChannelRejection.wrongMerchant("appid is not this channel's app");
    }
    String payload = Notification.bounded(plaintext);
    Object tradeState = data.getValue("trade_state");
    if (eventType.startsWith("REFUND.")) {
      // A refund result: never a payment, it goes to the refund's exception (by out_refund_no), not the gate.
      return new Notification(id, eventType, orderNoOrNull(data), null, payload, refundNotice(data));
    }
    if (!eventType.startsWith("TRANSACTION.")) {
      // Another event: it names no payment of ours to record with the gate.
      return new Notification(id, eventType, orderNoOrNull(data), null, payload);
    }
    if (!PAID_EVENT.equals(eventType) || !"SUCCESS".equals(tradeState)) {
      String word = eventType + ":" + (tradeState instanceof String s ? s : "NO_TRADE_STATE");
      return new Notification(id, eventType, orderNoOrNull(data),
          Notification.nonFinal(() -> callback(data, word, id, payload)), payload);
    }
    if (mchid == null) {
      throw ChannelRejection.wrongMerchant("a payment must name its mchid");
    }
    PaymentCallback cb = callback(data, PaymentCallback.SUCCESS, id, payload);
    return new Notification(id, eventType, cb.orderNo(), cb, payload);
  }

  private PaymentCallback callback(JsonObject data, String status, String id, String payload) {
    JsonObject amount = Fields.object(data, "amount");
    return new PaymentCallback(config.name(), Fields.id(data, "transaction_id"), Fields.id(data, "out_trade_no"),
        Fields.amount(amount, "total"), status, id, payload,
        Fields.currency(amount.getValue("currency") instanceof String c ? c : null, "amount.currency"));
  }

  /** REFUND.SUCCESS / REFUND.ABNORMAL / REFUND.CLOSED by its refund_status; null when it names no out_refund_no. */
  private static Notification.RefundNotice refundNotice(JsonObject data) {
    if (!(data.getValue("out_refund_no") instanceof String refundId) || !(data.getValue("refund_status") instanceof String status)) {
      return null;
    }
    GatewayClient.RefundState state = switch (status) {
      case "SUCCESS" -> GatewayClient.RefundState.REFUNDED;
      case "PROCESSING" -> GatewayClient.RefundState.PENDING;
      default -> GatewayClient.RefundState.FAILED;
    };
    return new Notification.RefundNotice(refundId, data.getValue("transaction_id") instanceof String t ? t : null, state,
        data.getValue("refund_id") instanceof String r ? r : null, status);
  }

  private static String orderNoOrNull(JsonObject data) {
    return data.getValue("out_trade_no") instanceof String s && s.matches("[A-Za-z0-9._:-]{1,64}") ? s : null;
  }

  @Override
  public Answer processed(CallbackResult result) {
    return Answer.empty(204);
  }

  @Override
  public Answer rejected(ChannelRejection rejection) {
    return fail(rejection.status(), rejection.code() + ": " + rejection.getMessage());
  }

  @Override
  public Answer retry(int status, String code, String message) {
    return fail(status, code + ": " + message);
  }

  private static Answer fail(int status, String message) {
    return Answer.json(status, new JsonObject().put("code", "FAIL").put("message", message).encode());
  }
}
