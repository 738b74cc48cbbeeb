package dev.ordergate.gate;

import dev.ordergate.db.Sql;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.ExceptionKind;
import dev.ordergate.domain.OrderStatus;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.exceptions.ExceptionRecorder;
import dev.ordergate.outbox.OutboxWriter;
import dev.ordergate.metrics.Metrics;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import dev.ordergate.db.Params;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Applies verified payment callbacks through the one-way gate, a batch per transaction (a batch
 * of one is the plain case). Per callback:
 * <ol>
 *   <li>claim the receipt: {@code INSERT ... ON CONFLICT (channel, txn_id) DO NOTHING RETURNING};
 *       a callback whose receipt exists answers the first answer, marked duplicate. A duplicate of
 *       a receipt still in flight waits on its row lock and then reads the committed answer;</li>
 *   <li>one conditional {@code UPDATE ... status = 'PAID' WHERE status = 'PENDING_PAYMENT' AND amount
 *       matches}; only the rows it returns mark the coupon used and write the transition;</li>
 *   <li>a loser reads the status it lost to and opens an exception order: money is never kept
 *       silently. Its refund tier is decided in the same transaction ({@link ExceptionRecorder});
 *       a winner writes ORDER_PAID and NOTIFY_SMS to the outbox, a loser no event of the order. An order past its expiry but not yet cancelled is still paid: the claim decides.</li>
 * </ol>
 * Several callbacks for one order in one batch are applied in arrival order (one UPDATE round
 * each), so a batch answers exactly as the same callbacks one by one would.
 */
public final class PaymentGate {

  private static final Logger log = LoggerFactory.getLogger(PaymentGate.class);

  private final Pool pool;
  private final Metrics metrics;
  private final OutboxWriter outbox;
  private final ExceptionRecorder exceptionRecorder;

  /** Winners write ORDER_PAID and NOTIFY_SMS to {@code outbox}; losers open exceptions through {@code exceptionRecorder}. */
  public PaymentGate(Pool pool, Metrics metrics, OutboxWriter outbox, ExceptionRecorder exceptionRecorder) {
    this.pool = pool;
    this.metrics = metrics;
    this.outbox = outbox;
    this.exceptionRecorder = exceptionRecorder;
  }

  /** Answers for {@code batch}, in its order. A batch that fails is split and retried one by one. */
  public Future<List<CallbackResult>> apply(List<PaymentCallback> batch) {
    return transaction(batch).recover(err -> batch.size() > 1 ? isolate(batch, err) : Future.failedFuture(err));
  }

  private Future<List<CallbackResult>> transaction(List<PaymentCallback> batch) {
    return Tx.run(pool, conn -> new Run(conn, batch, outbox, exceptionRecorder).execute()).onSuccess(results -> record(batch, results));
  }

  /** One poisoned callback must not fail the others: each one alone, its own failure its own. */
  private Future<List<CallbackResult>> isolate(List<PaymentCallback> batch, Throwable cause) {
    log.warn("batch of {} callbacks failed ({}); applying them one by one", batch.size(), cause.getMessage());
    List<Future<CallbackResult>> singles = new ArrayList<>();
    for (PaymentCallback cb : batch) {
      singles.add(transaction(List.of(cb)).map(r -> r.get(0)));
    }
    return Future.join(singles).transform(ar -> {
      if (ar.succeeded()) {
        List<CallbackResult> out = new ArrayList<>();
        singles.forEach(f -> out.add(f.result()));
        return Future.succeededFuture(out);
      }
      return Future.failedFuture(new PartialBatchFailure(singles));
    });
  }

  /** Thrown when isolation left some callbacks failed; carries every single's own future. */
  public static final class PartialBatchFailure extends RuntimeException {
    private final transient List<Future<CallbackResult>> singles;

    PartialBatchFailure(List<Future<CallbackResult>> singles) {
      super("some callbacks of the batch failed", null, false, false);
      this.singles = singles;
    }

    public List<Future<CallbackResult>> singles() {
      return singles;
    }
  }

  private void record(List<PaymentCallback> batch, List<CallbackResult> results) {
    for (int i = 0; i < batch.size(); i++) {
      PaymentCallback cb = batch.get(i);
      CallbackResult r = results.get(i);
      metrics.callback(cb.channel(), r.outcome(), r.duplicate());
      if (r.duplicate()) {
        continue;
      }
      if (r.outcome() == CallbackOutcome.APPLIED) {
        metrics.transitions(TransitionSource.PAYMENT_CALLBACK, OrderStatus.PAID, 1);
        log.debug("order {} PENDING_PAYMENT -> PAID by {} txn {}", cb.orderNo(), cb.channel(), cb.txnId());
      } else if (r.outcome().opensException()) {
        log.warn("payment not applied: {} order {} channel {} txn {} amount {} (order status {})",
            r.outcome(), cb.orderNo(), cb.channel(), cb.txnId(), cb.amountCents(), r.orderStatus());
      }
    }
  }

  private record Key(String channel, String txnId) {
    static Key of(PaymentCallback cb) {
      return new Key(cb.channel(), cb.txnId());
    }
  }

  /** One transaction's work over one batch. */
  private static final class Run {
    private final SqlConnection conn;
    private final List<PaymentCallback> batch;
    private final OutboxWriter outbox;
    private final ExceptionRecorder exceptionRecorder;
    /** First occurrence of each key; later ones in the batch are duplicates of it. */
    private final Map<Key, PaymentCallback> primaries = new LinkedHashMap<>();
    private final Map<Key, CallbackResult> answers = new HashMap<>();
    private final List<PaymentCallback> exceptions = new ArrayList<>();

    Run(SqlConnection conn, List<PaymentCallback> batch, OutboxWriter outbox, ExceptionRecorder exceptionRecorder) {
      this.conn = conn;
      this.batch = batch;
      this.outbox = outbox;
      this.exceptionRecorder = exceptionRecorder;
      for (PaymentCallback cb : batch) {
        primaries.putIfAbsent(Key.of(cb), cb);
      }
    }

    Future<List<CallbackResult>> execute() {
      List<PaymentCallback> all = new ArrayList<>(primaries.values());
      // Receipts are claimed in key order, so concurrent batches take their unique-index locks in
      // one order and do not deadlock on each other; everything else keeps arrival order.
      List<PaymentCallback> byKey = new ArrayList<>(all);
      byKey.sort(Comparator.comparing(PaymentCallback::channel).thenComparing(PaymentCallback::txnId));
      return conn.preparedQuery(Sql.CLAIM_RECEIPTS).execute(Params.of(
              strings(byKey, PaymentCallback::channel), strings(byKey, PaymentCallback::txnId),
              strings(byKey, PaymentCallback::orderNo), amounts(byKey), strings(byKey, PaymentCallback::gatewayStatus),
              strings(byKey, PaymentCallback::currency), strings(byKey, PaymentCallback::notificationId),
              strings(byKey, PaymentCallback::payload)))
          .compose(claimed -> {
            List<PaymentCallback> fresh = new ArrayList<>();
            List<PaymentCallback> seen = new ArrayList<>();
            Set<Key> claimedKeys = new HashSet<>();
            for (Row row : claimed) {
              claimedKeys.add(new Key(row.getString("channel"), row.getString("txn_id")));
            }
            for (PaymentCallback cb : all) {
              (claimedKeys.contains(Key.of(cb)) ? fresh : seen).add(cb);
            }
            return applyFresh(fresh)
                .compose(v -> recordOutcomes(fresh))
                .compose(v -> openExceptions())
                .compose(v -> firstAnswers(seen));
          })
          .map(v -> {
            List<CallbackResult> out = new ArrayList<>(batch.size());
            Map<Key, Boolean> answered = new HashMap<>();
            for (PaymentCallback cb : batch) {
              Key key = Key.of(cb);
              CallbackResult r = answers.get(key);
              out.add(answered.put(key, Boolean.TRUE) == null ? r : r.asDuplicate());
            }
            return out;
          });
    }

    /** Rounds of the gate: round k holds the k-th fresh SUCCESS callback of each order. */
    private Future<Void> applyFresh(List<PaymentCallback> fresh) {
      Map<String, List<PaymentCallback>> byOrder = new TreeMap<>();
      List<PaymentCallback> ignored = new ArrayList<>();
      for (PaymentCallback cb : fresh) {
        if (cb.isSuccess()) {
          byOrder.computeIfAbsent(cb.orderNo(), k -> new ArrayList<>()).add(cb);
        } else {
          ignored.add(cb);
        }
      }
      return round(byOrder, 0, ignored);
    }

    private Future<Void> round(Map<String, List<PaymentCallback>> byOrder, int k, List<PaymentCallback> ignored) {
      List<PaymentCallback> candidates = new ArrayList<>();
      for (List<PaymentCallback> list : byOrder.values()) {
        if (list.size() > k) {
          candidates.add(list.get(k));
        }
      }
      if (candidates.isEmpty() && ignored.isEmpty()) {
        return Future.succeededFuture();
      }
      return pay(candidates)
          .compose(winners -> classifyLosers(candidates, winners, ignored))
          .compose(v -> round(byOrder, k + 1, List.of()));
    }

    /** The gate and, in the same statement, the winners' side effects (see {@link Sql#PAY_ORDERS}). */
    private Future<List<PaymentCallback>> pay(List<PaymentCallback> candidates) {
      if (candidates.isEmpty()) {
        return Future.succeededFuture(List.of());
      }
      return conn.preparedQuery(Sql.PAY_ORDERS).execute(Params.of(
              strings(candidates, PaymentCallback::orderNo), strings(candidates, PaymentCallback::channel),
              strings(candidates, PaymentCallback::txnId), amounts(candidates), OutboxWriter.SMS_ORDER_PAID,
              strings(candidates, PaymentCallback::currency)))
          .map(rows -> {
            Set<String> paid = new HashSet<>();
            rows.forEach(row -> paid.add(row.getString("order_no")));
            List<PaymentCallback> winners = new ArrayList<>();
            for (PaymentCallback cb : candidates) {
              if (paid.contains(cb.orderNo())) {
                winners.add(cb);
                answers.put(Key.of(cb), new CallbackResult(CallbackOutcome.APPLIED, cb.orderNo(), OrderStatus.PAID, false));
              }
            }
            if (!winners.isEmpty()) {
              outbox.written(conn);
            }
            return winners;
          });
    }

    /** The losers read the status they lost to, after the UPDATE, and decide from it. */
    private Future<Void> classifyLosers(List<PaymentCallback> candidates, List<PaymentCallback> winners,
                                        List<PaymentCallback> ignored) {
      Set<PaymentCallback> won = new HashSet<>(winners);
      List<PaymentCallback> losers = new ArrayList<>();
      for (PaymentCallback cb : candidates) {
        if (!won.contains(cb)) {
          losers.add(cb);
        }
      }
      List<PaymentCallback> toRead = new ArrayList<>(losers);
      toRead.addAll(ignored);
      if (toRead.isEmpty()) {
        return Future.succeededFuture();
      }
      return conn.preparedQuery(Sql.ORDER_STATES).execute(Params.array(strings(toRead, PaymentCallback::orderNo)))
          .map(rows -> {
            Map<String, Row> states = new HashMap<>();
            rows.forEach(row -> states.put(row.getString("order_no"), row));
            for (PaymentCallback cb : losers) {
              Row state = states.get(cb.orderNo());
              CallbackOutcome outcome = classify(cb, state);
              exceptions.add(cb);
              answers.put(Key.of(cb), new CallbackResult(outcome, cb.orderNo(), statusOf(state), false));
            }
            for (PaymentCallback cb : ignored) {
              answers.put(Key.of(cb), new CallbackResult(CallbackOutcome.IGNORED, cb.orderNo(),
                  statusOf(states.get(cb.orderNo())), false));
            }
            return null;
          });
    }

    private static CallbackOutcome classify(PaymentCallback cb, Row state) {
      if (state == null) {
        return CallbackOutcome.UNKNOWN_ORDER;
      }
      return switch (OrderStatus.valueOf(state.getString("status"))) {
        case CANCELLED -> CallbackOutcome.LATE_AFTER_CANCEL;
        case PAID -> CallbackOutcome.DOUBLE_PAYMENT;
        case PENDING_PAYMENT -> {
          if (state.getLong("amount_cents") != cb.amountCents()
              || (cb.currency() != null && !cb.currency().equals(state.getString("currency")))) {
            yield CallbackOutcome.AMOUNT_MISMATCH;
          }
          // The UPDATE saw this row not pending, yet it reads pending: a status never goes back.
          throw new IllegalStateException("order " + cb.orderNo() + " lost the gate but reads pending");
        }
      };
    }

    private static OrderStatus statusOf(Row state) {
      return state == null ? null : OrderStatus.valueOf(state.getString("status"));
    }

    /** Stores each non-applied answer on its receipt (APPLIED ones were stored by the gate's statement). */
    private Future<Void> recordOutcomes(List<PaymentCallback> fresh) {
      List<PaymentCallback> rest = new ArrayList<>();
      List<String> outcomes = new ArrayList<>();
      List<String> statuses = new ArrayList<>();
      for (PaymentCallback cb : fresh) {
        CallbackResult r = answers.get(Key.of(cb));
        if (r.outcome() != CallbackOutcome.APPLIED) {
          rest.add(cb);
          outcomes.add(r.outcome().name());
          statuses.add(r.orderStatus() == null ? null : r.orderStatus().name());
        }
      }
      if (rest.isEmpty()) {
        return Future.succeededFuture();
      }
      return conn.preparedQuery(Sql.RECORD_OUTCOMES).execute(Params.of(
              strings(rest, PaymentCallback::channel), strings(rest, PaymentCallback::txnId),
              outcomes.toArray(String[]::new), statuses.toArray(String[]::new)))
          .mapEmpty();
    }

    private Future<Void> openExceptions() {
      if (exceptions.isEmpty()) {
        return Future.succeededFuture();
      }
      List<ExceptionKind> kinds = exceptions.stream()
          .map(cb -> ExceptionKind.of(answers.get(Key.of(cb)).outcome())).toList();
      return exceptionRecorder.open(conn, exceptions, kinds);
    }

    /** Receipts claimed before this transaction: answer what was answered the first time. */
    private Future<Void> firstAnswers(List<PaymentCallback> seen) {
      if (seen.isEmpty()) {
        return Future.succeededFuture();
      }
      return conn.preparedQuery(Sql.FIRST_ANSWERS).execute(Params.of(
              strings(seen, PaymentCallback::channel), strings(seen, PaymentCallback::txnId)))
          .map(rows -> {
            for (Row row : rows) {
              String status = row.getString("order_status");
              answers.put(new Key(row.getString("channel"), row.getString("txn_id")), new CallbackResult(
                  CallbackOutcome.valueOf(row.getString("outcome")), row.getString("order_no"),
                  status == null ? null : OrderStatus.valueOf(status), true));
            }
            for (PaymentCallback cb : seen) {
              if (!answers.containsKey(Key.of(cb))) {
                throw new IllegalStateException("receipt " + cb.channel() + "/" + cb.txnId() + " has no answer");
              }
            }
            return null;
          });
    }

    private static String[] strings(List<PaymentCallback> cbs, Function<PaymentCallback, String> f) {
      return cbs.stream().map(f).toArray(String[]::new);
    }

    private static Long[] amounts(List<PaymentCallback> cbs) {
      return cbs.stream().map(PaymentCallback::amountCents).toArray(Long[]::new);
    }
  }
}
