package dev.ordergate.channel.alipay;

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

import java.time.Clock;
import java.util.Set;

/**
 * Alipay asynchronous notifications (gateway protocol, RSA2). The form is decoded from the raw bytes
 * in its own charset and verified before anything reads a value; {@code app_id} must be ours.
 * {@code TRADE_SUCCESS} and {@code TRADE_FINISHED} are a payment (txn = {@code trade_no}, order =
 * {@code out_trade_no}, amount = {@code total_amount} in yuan, converted exactly); any other verified
 * status ({@code WAIT_BUYER_PAY}, {@code TRADE_CLOSED}) is recorded only; a refund's notify (with
 * {@code out_biz_no} and {@code refund_fee}) goes to that refund's exception. Answers: text/plain
 * {@code success} when processed, {@code fail} otherwise (Alipay retries until it reads {@code success}).
 * Alipay signs no time a tolerance could apply to: replays are absorbed by the receipt's idempotency.
 */
public final class AlipayChannel extends BaseChannel<AlipaySettings> {

  static final Set<String> PAID = Set.of("TRADE_SUCCESS", "TRADE_FINISHED");

  public AlipayChannel(ChannelConfig config, Clock clock) {
    super(config, clock);
  }

  @Override
  public Notification receive(Inbound request) {
    AlipayForm form = AlipayForm.parse(request.body(), request.header("Content-Type"));
    if (!"RSA2".equals(form.get("sign_type"))) {
      throw ChannelRejection.badSignature("sign_type must be RSA2");
    }
    if (!AlipaySignature.verify(form.params(), form.charset(), settings.alipayPublicKeys())) {
      throw ChannelRejection.badSignature("sign does not verify with any configured Alipay public key");
    }
    if (!settings.appId().equals(form.get("app_id"))) {
      throw ChannelRejection.wrongMerchant("app_id is not this channel's app");
    }
    String notifyId = form.get("notify_id");
    String status = form.get("trade_status");
    String payload = Notification.bounded(new String(request.body(), form.charset()));
    if (form.get("out_biz_no") != null && (form.get("refund_fee") != null || form.get("gmt_refund") != null)) {
      // A refund's notify (TRADE_CLOSED when refunded in full, TRADE_SUCCESS when in part): not a payment, it
      // goes to the refund of out_biz_no (our out_request_no), never to the gate. Alipay notifies refunds made.
      String orderNo = form.get("out_trade_no");
      return new Notification(notifyId, status, orderNo != null && orderNo.matches("[A-Za-z0-9._:-]{1,64}") ? orderNo : null,
          null, payload, new Notification.RefundNotice(form.get("out_biz_no"), form.get("trade_no"),
              GatewayClient.RefundState.REFUNDED, null, status + " refund_fee=" + form.get("refund_fee")));
    }
    if (!PAID.contains(status)) {
      String orderNo = form.get("out_trade_no");
      String word = status == null ? "NO_TRADE_STATUS" : status;
      return new Notification(notifyId, status, orderNo != null && orderNo.matches("[A-Za-z0-9._:-]{1,64}") ? orderNo : null,
          Notification.nonFinal(() -> callback(form, word, notifyId, payload)), payload);
    }
    PaymentCallback cb = callback(form, PaymentCallback.SUCCESS, notifyId, payload);
    return new Notification(notifyId, status, cb.orderNo(), cb, payload);
  }

  private PaymentCallback callback(AlipayForm form, String status, String notifyId, String payload) {
    return new PaymentCallback(config.name(), Fields.id(form.get("trade_no"), "trade_no"),
        Fields.id(form.get("out_trade_no"), "out_trade_no"), Yuan.toCents(form.get("total_amount"), "total_amount"),
        status, notifyId, payload, config.currency());
  }

  @Override
  public Answer processed(CallbackResult result) {
    return Answer.text(200, "success");
  }

  @Override
  public Answer rejected(ChannelRejection rejection) {
    return Answer.text(rejection.status(), "fail");
  }

  @Override
  public Answer retry(int status, String code, String message) {
    return Answer.text(status, "fail");
  }
}
