package dev.ordergate.exceptions;

import dev.ordergate.db.ExceptionSql;
import dev.ordergate.db.Params;
import dev.ordergate.domain.ExceptionKind;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.outbox.OutboxSignal;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Opens exception orders inside the payment gate's transaction: decides each one's refund tier,
 * and writes the exception, its history and (automatic refund) the REFUND_REQUESTED outbox event
 * in one statement. Idempotent by (channel, txn id, conflict key): a repeated callback opens nothing.
 */
public final class ExceptionRecorder {

  private static final Logger log = LoggerFactory.getLogger(ExceptionRecorder.class);

  private final RefundPolicy policy;
  private final OutboxSignal signal;

  public ExceptionRecorder(RefundPolicy policy, OutboxSignal signal) {
    this.policy = policy;
    this.signal = signal;
  }

  /**
   * One exception per txn, plus one per distinct conflicting content ({@code order/amount}) of a
   * CONFLICTING_DUPLICATE: a repeated delivery of either opens nothing new.
   */
  static String conflictKey(ExceptionKind kind, PaymentCallback cb) {
    return kind == ExceptionKind.CONFLICTING_DUPLICATE ? cb.orderNo() + "/" + cb.amountCents() : "";
  }

  /** {@code kinds.get(i)} is why {@code payments.get(i)} was not applied. */
  public Future<Void> open(SqlConnection conn, List<PaymentCallback> payments, List<ExceptionKind> kinds) {
    if (payments.isEmpty()) {
      return Future.succeededFuture();
    }
    int n = payments.size();
    String[] orderNos = new String[n];
    String[] kindNames = new String[n];
    String[] channels = new String[n];
    String[] txnIds = new String[n];
    Long[] amounts = new Long[n];
    String[] statuses = new String[n];
    String[] reasons = new String[n];
    String[] conflictKeys = new String[n];
    for (int i = 0; i < n; i++) {
      PaymentCallback cb = payments.get(i);
      RefundPolicy.Decision d = policy.decide(kinds.get(i), cb.channel(), cb.amountCents());
      orderNos[i] = cb.orderNo();
      kindNames[i] = kinds.get(i).name();
      channels[i] = cb.channel();
      txnIds[i] = cb.txnId();
      amounts[i] = cb.amountCents();
      statuses[i] = d.status().name();
      reasons[i] = d.reason();
      conflictKeys[i] = conflictKey(kinds.get(i), cb);
    }
    return conn.preparedQuery(ExceptionSql.OPEN_EXCEPTIONS)
        .execute(Params.of(orderNos, kindNames, channels, txnIds, amounts, statuses, reasons, conflictKeys))
        .map(rows -> {
          boolean refunds = false;
          for (Row r : rows) {
            refunds |= r.getLong("refunds") > 0;
            log.info("exception {} opened: {} order {} channel {} txn {} amount {} -> {}", r.getLong("id"),
                r.getString("kind"), r.getString("order_no"), r.getString("channel"), r.getString("txn_id"),
                r.getLong("amount_cents"), r.getString("status"));
          }
          if (refunds) {
            signal.afterCommit(conn);
          }
          return null;
        });
  }
}
