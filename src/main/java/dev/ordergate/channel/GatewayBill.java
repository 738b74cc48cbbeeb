package dev.ordergate.channel;

import io.vertx.core.Future;

import java.time.LocalDate;
import java.time.ZoneId;
import java.util.List;

/**
 * The gateway's own record of one day, for reconciliation: its trade bill (WeChat Pay), its bill download
 * (Alipay), its list of PaymentIntents and refunds (Stripe). One implementation per gateway package, each
 * signing its requests and verifying the answers as that gateway requires (the same keys as
 * {@link GatewayClient}). A network call: never made inside a database transaction. Failures are
 * {@link GatewayFailure}; a day the gateway has no bill for is an empty list.
 */
public interface GatewayBill {

  enum Kind {
    PAYMENT, REFUND
  }

  /**
   * One line of the bill. {@code txnId} is the payment's id as our receipts store it for the channel
   * (WeChat Pay {@code transaction_id}, Alipay {@code trade_no}, Stripe the PaymentIntent id), also on a
   * refund line; {@code orderNo} is out_trade_no / {@code metadata[orderNo]}; {@code amountCents} in minor
   * units (a refund's amount is positive); {@code refundId} the gateway's refund id (with
   * {@code outRefundNo}, our refund number, where the bill gives them); {@code status} the gateway's word.
   */
  record BillLine(String txnId, String orderNo, long amountCents, String currency, Kind kind, String refundId,
                  String outRefundNo, String status) {

    public static BillLine payment(String txnId, String orderNo, long amountCents, String currency, String status) {
      return new BillLine(txnId, orderNo, amountCents, currency, Kind.PAYMENT, null, null, status);
    }
  }

  /** The zone in which this gateway cuts its days (WeChat Pay and Alipay: China time; Stripe: UTC). */
  ZoneId zone();

  /** Every line of {@code day}'s bill: successful payments and refunds. */
  Future<List<BillLine>> fetch(LocalDate day);

  /** A bill that cannot be read as the gateway documents it: treated like an unusable answer. */
  static GatewayFailure malformed(String channel, String message) {
    return GatewayFailure.unreachable(channel, "MALFORMED_BILL", message);
  }

  /** The index of the column {@code name} in a bill's header (bills promise names, not the order). */
  static int column(String channel, List<String> header, String name) {
    int i = header.indexOf(name);
    if (i < 0) {
      throw malformed(channel, "the bill header has no column " + name);
    }
    return i;
  }
}
