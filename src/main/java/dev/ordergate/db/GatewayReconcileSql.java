package dev.ordergate.db;

/**
 * What the gateway reconciliation reads (read only): our receipts and refunds of one channel, by the
 * gateway's transaction ids, or by the gateway's day ({@code $2} ≤ time &lt; {@code $3}, timestamptz).
 */
public final class GatewayReconcileSql {

  private GatewayReconcileSql() {
  }

  /** Our receipts of the transactions {@code $2} (text[]) on channel {@code $1}. */
  public static final String RECEIPTS_BY_TXN = """
      SELECT txn_id, order_no, amount_cents, currency, outcome
      FROM payment_receipts WHERE channel = $1 AND txn_id = ANY($2::text[])""";

  /** Our SUCCESS receipts of channel {@code $1} received in the gateway's day. */
  public static final String RECEIPTS_OF_DAY = """
      SELECT txn_id, order_no, amount_cents, currency, outcome
      FROM payment_receipts
      WHERE channel = $1 AND gateway_status = 'SUCCESS' AND received_at >= $2 AND received_at < $3
      ORDER BY id""";

  /** Our refunds (exception orders being or having been refunded; REFUND_PROCESSING: V12, issue 10) of the transactions {@code $2}. */
  public static final String REFUNDS_BY_TXN = """
      SELECT txn_id, order_no, amount_cents, status
      FROM exception_orders
      WHERE channel = $1 AND txn_id = ANY($2::text[]) AND status IN ('REFUND_PENDING', 'REFUND_PROCESSING', 'REFUNDED')""";

  /** Exception orders of channel {@code $1} whose refund was confirmed in the gateway's day. */
  public static final String REFUNDED_OF_DAY = """
      SELECT e.txn_id, e.order_no, e.amount_cents, e.status
      FROM exception_orders e
      WHERE e.channel = $1 AND e.status = 'REFUNDED'
        AND EXISTS (SELECT 1 FROM exception_history h WHERE h.exception_id = e.id AND h.event = 'REFUND_CONFIRMED'
                    AND h.at >= $2 AND h.at < $3)
      ORDER BY e.id""";
}
