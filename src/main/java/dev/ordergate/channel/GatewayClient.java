package dev.ordergate.channel;

import io.vertx.core.Future;

import java.time.Instant;

/**
 * The outbound half of a channel: open a payment at the gateway, query its trade, close it, refund it. One
 * implementation per gateway package, each signing its requests and verifying the gateway's answers as
 * that gateway requires. Every call is a network call: never made inside a database transaction or while
 * a row lock is held. Failures are {@link GatewayFailure}.
 */
public interface GatewayClient {

  /** What to open: the order's amount and currency, and its expiry as the gateway's own payment deadline. */
  record OpenRequest(String orderNo, long amountCents, String currency, Instant expiresAt, String description) {}

  /**
   * The opened trade: {@code reference} identifies it at the gateway for query and close (WeChat Pay and
   * Alipay: our out_trade_no; Stripe: the PaymentIntent id); {@code clientField}/{@code clientValue} is
   * what the customer's app needs (code_url, qr_code, client_secret).
   */
  record Opened(String reference, String clientField, String clientValue) {}

  /** What the gateway says of a trade. */
  enum TradeState {
    /** Paid: {@link Trade#txnId()} and the amount are the payment's, the same the notification carries. */
    PAID,
    /** Created and still payable. */
    OPEN,
    /** Closed, expired or cancelled: it can no longer be paid. */
    CLOSED,
    /** The gateway knows no such trade (Alipay before the buyer scans: it may still appear, see README). */
    NOT_FOUND
  }

  record Trade(TradeState state, String txnId, long amountCents, String currency, String gatewayStatus) {
    public static Trade of(TradeState state, String gatewayStatus) {
      return new Trade(state, null, 0, null, gatewayStatus);
    }
  }

  Future<Opened> open(OpenRequest request);

  Future<Trade> query(String reference, String orderNo);

  /** Asks the gateway to close the trade; success says nothing about whether it was paid (query for that). */
  Future<Void> close(String reference, String orderNo);

  /**
   * A refund of one payment: {@code refundId} is ordergate's (the REFUND_REQUESTED outbox event id), sent as
   * the gateway's idempotency key (WeChat out_refund_no, Alipay out_request_no, Stripe Idempotency-Key and
   * metadata[refundId]) and the same on every retry, so the gateway refunds once; {@code txnId} is the
   * payment's transaction id at the gateway (WeChat transaction_id, Alipay trade_no, the PaymentIntent).
   */
  record RefundRequest(String refundId, String txnId, String orderNo, long amountCents, String currency, String reason) {}

  /** What the gateway says of a refund. */
  enum RefundState {
    /** The money went back (WeChat SUCCESS, Alipay 10000, Stripe succeeded). */
    REFUNDED,
    /** Accepted, result to come by notification or query (WeChat PROCESSING, Stripe pending). */
    PENDING,
    /** Refused or failed for good (WeChat ABNORMAL/CLOSED, Stripe failed/canceled, a business error answer). */
    FAILED
  }

  /** {@code gatewayRefundId}: the gateway's own id (WeChat refund_id, Stripe re_...), may be null; {@code gatewayStatus}: its word. */
  record Refund(RefundState state, String gatewayRefundId, String gatewayStatus) {}

  /**
   * Asks the gateway to refund. A business error answer (unknown or unpaid trade, already refunded) fails
   * the future with an answered {@link GatewayFailure}: refused for good. An unreachable gateway, a 5xx, an
   * answer whose signature does not verify, or a transient refusal (rate limited, balance short, system
   * busy) fails it with an unreachable one: the caller retries with the same refund id.
   */
  Future<Refund> refund(RefundRequest request);

  /** What the gateway now says of the refund {@code request.refundId()} (failures as for {@link #refund}). */
  Future<Refund> queryRefund(RefundRequest request);
}
