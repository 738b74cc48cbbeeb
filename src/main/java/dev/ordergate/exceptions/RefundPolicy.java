package dev.ordergate.exceptions;

import dev.ordergate.channel.GatewayClients;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.domain.ExceptionKind;

import java.util.Map;

/**
 * The refund tier of a new exception: a LATE_AFTER_CANCEL or DOUBLE_PAYMENT at or below
 * {@code payments.autoRefundMaxCents} on a channel that can refund is refunded automatically: a gateway
 * channel (wechatpay-v3, alipay, stripe) with its outbound keys, at its gateway's refund API, or any channel
 * with a {@code refundUrl}; anything else goes to manual review. Decided in the gate's transaction.
 */
public record RefundPolicy(long autoRefundMaxCents, Map<String, ChannelConfig> channels) {

  /** The status a new exception gets, and why (kept in its history). */
  public record Decision(ExceptionStatus status, String reason) {}

  public Decision decide(ExceptionKind kind, String channel, long amountCents) {
    if (kind != ExceptionKind.LATE_AFTER_CANCEL && kind != ExceptionKind.DOUBLE_PAYMENT) {
      return new Decision(ExceptionStatus.MANUAL_REVIEW, kind + " is never refunded automatically");
    }
    ChannelConfig c = channels.get(channel);
    if (c == null || c.refundUrl() == null && !GatewayClients.refundsAtGateway(c)) {
      return new Decision(ExceptionStatus.MANUAL_REVIEW, c == null || c.kind() == dev.ordergate.channel.ChannelKind.ORDERGATE
          ? "channel " + channel + " has no refundUrl"
          : "channel " + channel + " has neither its gateway's outbound keys nor a refundUrl");
    }
    if (amountCents > autoRefundMaxCents) {
      return new Decision(ExceptionStatus.MANUAL_REVIEW,
          amountCents + " cents is above autoRefundMaxCents " + autoRefundMaxCents);
    }
    return new Decision(ExceptionStatus.REFUND_PENDING,
        amountCents + " cents is at or below autoRefundMaxCents " + autoRefundMaxCents + ": refund requested");
  }
}
