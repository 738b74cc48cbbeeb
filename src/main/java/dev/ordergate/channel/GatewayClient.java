package dev.ordergate.channel;

import io.vertx.core.Future;

import java.time.Instant;

/**
 * The outbound half of a channel: open a payment at the gateway, query its trade, close it. One
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
}
