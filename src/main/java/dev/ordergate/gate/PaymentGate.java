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
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Applies verified payment notifications through the one-way gate, a batch per transaction (a batch
 * of one is the plain case). Per notification:
 * <ol>
 *   <li>record the delivery ({@code payment_notifications}, one row per distinct content) and, for a
 *       SUCCESS, claim the receipt: {@code INSERT ... ON CONFLICT (channel, txn_id) DO NOTHING RETURNING}.
 *       A non-final status never claims the key: it is answered IGNORED and changes nothing. A SUCCESS
 *       whose receipt exists answers the first answer, marked duplicate; if its order or amount differs
 *       from the first SUCCESS it also opens a CONFLICTING_DUPLICATE exception (manual review). A
 *       duplicate of a receipt still in flight waits on its row lock and then reads the committed answer;</li>
 *   <li>one conditional {@code UPDATE ... status = 'PAID' WHERE status = 'PENDING_PAYMENT' AND amount
 *       matches}; only the rows it returns mark the coupon used and write the transition;</li>
 *   <li>a loser reads the status it lost to and opens an exception order: money is never kept
 *       silently. Its refund tier is decided in the same transaction ({@link ExceptionRecorder});
 *       a winner writes ORDER_PAID and NOTIFY_SMS to the outbox, a loser no event of the order. An
 *       order past its expiry but not yet cancelled is still paid: the claim decides. A loser that
 *       reads a pending order with the right amount (its creation committed between the UPDATE and
 *       the read) goes through the gate once more.</li>
 * </ol>
 * Steps 1 and 2 are one statement ({@link Sql#CLAIM_AND_PAY}) for each order's first SUCCESS in the
 * batch: a batch of first payments is one round trip, and its receipts are written once, with the answer
 * APPLIED that every other outcome corrects before the commit. Several callbacks for one order in one
 * batch are applied in arrival order (one UPDATE round each), so a batch answers exactly as the same
 * callbacks one by one would. A batch that fails fails whole; {@link CallbackCoalescer} then runs its
 * callbacks one by one.
 *
 * <p>A batch of first payments (every callback a SUCCESS, of its own key and its own order: the common
 * batch) is first tried as that statement alone, without {@code BEGIN} and {@code COMMIT} ({@link
 * Sql#CLAIM_AND_PAY_ALL}): it commits if every callback won, else it undoes itself whole and the batch goes
 * again in a transaction. The answers, the rows written and the locks taken are those of the transaction;
 * the winners' batches save a statement and a round trip each, a batch with a loser pays its statement twice,
 * and the next {@link #TRANSACTIONS_AFTER_UNDONE} batches go to a transaction at once.
 */
public final class PaymentGate {

  private static final Logger log = LoggerFactory.getLogger(PaymentGate.class);
  /** Batches of first payments that go to a transaction at once after one whose single statement was undone. */
  static final int TRANSACTIONS_AFTER_UNDONE = 16;

  private final Pool pool;
  private final Metrics metrics;
  private final OutboxWriter outbox;
  private final ExceptionRecorder exceptionRecorder;
  private final GateHook hook;
  /**
   * Batches of first payments still to go to a transaction at once, after one whose statement was undone. An
   * undone statement costs a whole statement and saves nothing; a statement that commits saves about a tenth of
   * one. So the single statement pays only while few are undone, and a run of losers (gateways retrying
   * notifications that were answered, late payments after a sweep) goes to transactions instead of paying
   * twice for most batches.
   */
  private final AtomicInteger transactionsAhead = new AtomicInteger();

  /** Winners write ORDER_PAID and NOTIFY_SMS to {@code outbox}; losers open exceptions through {@code exceptionRecorder}. */
  public PaymentGate(Pool pool, Metrics metrics, OutboxWriter outbox, ExceptionRecorder exceptionRecorder) {
    this(pool, metrics, outbox, exceptionRecorder, GateHook.NONE);
  }

  public PaymentGate(Pool pool, Metrics metrics, OutboxWriter outbox, ExceptionRecorder exceptionRecorder,
                     GateHook hook) {
    this.pool = pool;
    this.metrics = metrics;
    this.outbox = outbox;
    this.exceptionRecorder = exceptionRecorder;
    this.hook = hook;
  }

  /** Answers for {@code batch}, in its order, after its one transaction committed. */
  public Future<List<CallbackResult>> apply(List<PaymentCallback> batch) {
    return apply(batch, TransitionSource.PAYMENT_CALLBACK);
  }

  /**
   * The same gate for payments learnt another way than by their notification: {@link
   * TransitionSource#PAYMENT_QUERY} (the gateway answered "paid" to close-before-cancel's query). Same
   * idempotency key (channel, txn id), so whichever of the query and the notification comes second is
   * the duplicate.
   */
  public Future<List<CallbackResult>> apply(List<PaymentCallback> batch, TransitionSource source) {
    Statements sql = source == TransitionSource.PAYMENT_QUERY ? Statements.BY_QUERY : Statements.BY_CALLBACK;
    Future<List<CallbackResult>> applied;
    if (hook == GateHook.NONE && allFirstPayments(batch) && wholeStatementDue()) {
      // A loser (or a deadlock) undid the whole statement: the batch goes again in a transaction, which tells
      // the losers apart (and retries a deadlock).
      applied = applyWhole(batch, sql.claimAndPayAll())
          .onSuccess(results -> metrics.gateBatch("statement"))
          .recover(err -> {
            if (!notAllWon(err) && !Tx.isRetryable(err)) {
              return Future.failedFuture(err);
            }
            transactionsAhead.set(TRANSACTIONS_AFTER_UNDONE);
            return inTransaction(batch, sql).onSuccess(results -> metrics.gateBatch("again"));
          });
    } else {
      applied = inTransaction(batch, sql).onSuccess(results -> metrics.gateBatch("transaction"));
    }
    return applied.onSuccess(results -> record(batch, results, source));
  }

  /** The gate's statements for one source: they write it as the transition's source and {@code closed_by}. */
  private record Statements(String claimAndPayAll, String claimAndPay, String payOrders) {
    static final Statements BY_CALLBACK = new Statements(Sql.CLAIM_AND_PAY_ALL, Sql.CLAIM_AND_PAY, Sql.PAY_ORDERS);
    static final Statements BY_QUERY =
        new Statements(Sql.CLAIM_AND_PAY_ALL_BY_QUERY, Sql.CLAIM_AND_PAY_BY_QUERY, Sql.PAY_ORDERS_BY_QUERY);
  }

  /** True unless a batch of first payments is still to go to a transaction after an undone statement (and counts it). */
  private boolean wholeStatementDue() {
    return transactionsAhead.getAndUpdate(n -> Math.max(0, n - 1)) == 0;
  }

  private Future<List<CallbackResult>> inTransaction(List<PaymentCallback> batch, Statements sql) {
    return Tx.run(pool, conn -> new Run(conn, batch, outbox, exceptionRecorder, hook, sql.claimAndPay(),
        sql.payOrders()).execute());
  }

  /**
   * Every callback a SUCCESS, each of another key and another order: if all of them win, the batch is the
   * claiming statement alone, and {@link #applyWhole} runs it as its own transaction.
   */
  static boolean allFirstPayments(List<PaymentCallback> batch) {
    Set<Key> keys = new HashSet<>();
    Set<String> orders = new HashSet<>();
    for (PaymentCallback cb : batch) {
      if (!cb.isSuccess() || !keys.add(Key.of(cb)) || !orders.add(cb.orderNo())) {
        return false;
      }
    }
    return true;
  }

  /**
   * The batch as one statement without {@code BEGIN} and {@code COMMIT} ({@link Sql#CLAIM_AND_PAY_ALL}): it
   * commits with every callback APPLIED, or it undoes itself whole and fails with {@link Sql#NOT_ALL_WON}.
   */
  private Future<List<CallbackResult>> applyWhole(List<PaymentCallback> batch, String sql) {
    return pool.withConnection(conn -> conn.preparedQuery(sql).execute(Claim.of(batch, batch).params())
        .map(rows -> {
          outbox.written(conn);
          List<CallbackResult> results = new ArrayList<>(batch.size());
          for (PaymentCallback cb : batch) {
            results.add(new CallbackResult(CallbackOutcome.APPLIED, cb.orderNo(), OrderStatus.PAID, false));
          }
          return results;
        }));
  }

  static boolean notAllWon(Throwable err) {
    return err instanceof PgException pg && Sql.NOT_ALL_WON.equals(pg.getSqlState());
  }

  private void record(List<PaymentCallback> batch, List<CallbackResult> results, TransitionSource source) {
    for (int i = 0; i < batch.size(); i++) {
      PaymentCallback cb = batch.get(i);
      CallbackResult r = results.get(i);
      metrics.callback(cb.channel(), r.outcome(), r.duplicate());
      if (r.conflicting()) {
        metrics.callbackConflict(cb.channel());
        log.warn("conflicting duplicate: channel {} txn {} says order {} amount {}, unlike its first SUCCESS "
            + "(answered {}); exception opened for manual review", cb.channel(), cb.txnId(), cb.orderNo(),
            cb.amountCents(), r.outcome());
      }
      if (r.duplicate()) {
        continue;
      }
      if (r.outcome() == CallbackOutcome.APPLIED) {
        metrics.transitions(source, OrderStatus.PAID, 1);
        log.debug("order {} PENDING_PAYMENT -> PAID by {} txn {} ({})", cb.orderNo(), cb.channel(), cb.txnId(), source);
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

  /** One distinct delivered content: the unique key of {@code payment_notifications}. */
  private record Note(String channel, String txnId, String status, String orderNo, long amountCents) {
    static Note of(PaymentCallback cb) {
      return new Note(cb.channel(), cb.txnId(), cb.gatewayStatus(), cb.orderNo(), cb.amountCents());
    }
  }

  private static final Comparator<Note> NOTE_ORDER = Comparator.comparing(Note::channel)
      .thenComparing(Note::txnId).thenComparing(Note::status).thenComparing(Note::orderNo)
      .thenComparingLong(Note::amountCents);

  /**
   * The claiming statement's parameters ({@link Sql#CLAIM_AND_PAY}), and its leads: the first SUCCESS of each
   * order, which the statement puts through the gate if it claims its key (the others wait for the rounds after
   * it). {@code all}: the first SUCCESS of each key, in arrival order.
   */
  private record Claim(Tuple params, List<PaymentCallback> leads) {

    static Claim of(List<PaymentCallback> batch, List<PaymentCallback> all) {
      // Receipts (and notification rows) are claimed in key order, so concurrent batches take their
      // unique-index locks in one order and do not deadlock on each other; everything else keeps arrival order.
      List<PaymentCallback> byKey = new ArrayList<>(all);
      byKey.sort(Comparator.comparing(PaymentCallback::channel).thenComparing(PaymentCallback::txnId));
      Map<Note, PaymentCallback> notes = new TreeMap<>(NOTE_ORDER);
      Map<Note, Integer> deliveries = new HashMap<>();
      for (PaymentCallback cb : batch) {
        Note n = Note.of(cb);
        notes.putIfAbsent(n, cb);
        deliveries.merge(n, 1, Integer::sum);
      }
      List<PaymentCallback> noted = new ArrayList<>(notes.values());
      Integer[] counts = notes.keySet().stream().map(deliveries::get).toArray(Integer[]::new);
      Map<String, PaymentCallback> firstOfOrder = new TreeMap<>();
      for (PaymentCallback cb : all) {
        firstOfOrder.putIfAbsent(cb.orderNo(), cb);
      }
      List<PaymentCallback> leads = new ArrayList<>(firstOfOrder.values());
      return new Claim(Params.of(
          strings(byKey, PaymentCallback::channel), strings(byKey, PaymentCallback::txnId),
          strings(byKey, PaymentCallback::orderNo), amounts(byKey), strings(byKey, PaymentCallback::gatewayStatus),
          strings(noted, PaymentCallback::channel), strings(noted, PaymentCallback::txnId),
          strings(noted, PaymentCallback::orderNo), amounts(noted), strings(noted, PaymentCallback::gatewayStatus),
          strings(noted, PaymentCallback::notificationId), strings(noted, PaymentCallback::payload), counts,
          strings(byKey, PaymentCallback::currency), OutboxWriter.SMS_ORDER_PAID,
          strings(leads, PaymentCallback::channel), strings(leads, PaymentCallback::txnId)), leads);
    }
  }

  /** One transaction's work over one batch. */
  private static final class Run {
    private final SqlConnection conn;
    private final List<PaymentCallback> batch;
    private final OutboxWriter outbox;
    private final ExceptionRecorder exceptionRecorder;
    private final GateHook hook;
    private final String claimAndPay;
    private final String payOrders;
    /** First SUCCESS of each key; later ones in the batch are duplicates of it. */
    private final Map<Key, PaymentCallback> primaries = new LinkedHashMap<>();
    /** Non-final notifications: recorded and answered IGNORED. */
    private final List<PaymentCallback> nonFinal = new ArrayList<>();
    private final Map<Key, CallbackResult> answers = new HashMap<>();
    /** The order and amount of each key's first SUCCESS (this batch's or a receipt's). */
    private final Map<Key, PaymentCallback> firstContent = new HashMap<>();
    private final Map<String, OrderStatus> ignoredStatus = new HashMap<>();
    private final List<PaymentCallback> exceptions = new ArrayList<>();
    private final List<ExceptionKind> exceptionKinds = new ArrayList<>();

    Run(SqlConnection conn, List<PaymentCallback> batch, OutboxWriter outbox, ExceptionRecorder exceptionRecorder,
        GateHook hook, String claimAndPay, String payOrders) {
      this.conn = conn;
      this.claimAndPay = claimAndPay;
      this.payOrders = payOrders;
      this.batch = batch;
      this.outbox = outbox;
      this.exceptionRecorder = exceptionRecorder;
      this.hook = hook;
      for (PaymentCallback cb : batch) {
        if (cb.isSuccess()) {
          primaries.putIfAbsent(Key.of(cb), cb);
        } else {
          nonFinal.add(cb);
        }
      }
    }

    Future<List<CallbackResult>> execute() {
      List<PaymentCallback> all = new ArrayList<>(primaries.values());
      Claim claim = Claim.of(batch, all);
      List<PaymentCallback> leads = claim.leads();
      return conn.preparedQuery(claimAndPay).execute(claim.params())
          .compose(claimed -> {
            Set<Key> claimedKeys = new HashSet<>();
            Set<Key> paidKeys = new HashSet<>();
            for (Row row : claimed) {
              Key key = new Key(row.getString("channel"), row.getString("txn_id"));
              claimedKeys.add(key);
              if (row.getBoolean("paid")) {
                paidKeys.add(key);
              }
            }
            List<PaymentCallback> fresh = new ArrayList<>();
            List<PaymentCallback> seen = new ArrayList<>();
            for (PaymentCallback cb : all) {
              if (claimedKeys.contains(Key.of(cb))) {
                fresh.add(cb);
                firstContent.put(Key.of(cb), cb);
              } else {
                seen.add(cb);
              }
            }
            List<PaymentCallback> tried = new ArrayList<>();
            for (PaymentCallback cb : leads) {
              if (claimedKeys.contains(Key.of(cb))) {
                tried.add(cb);
              }
            }
            return won(tried, cb -> paidKeys.contains(Key.of(cb)))
                .compose(winners -> classifyLosers(tried, winners, nonFinal, false))
                .compose(v -> applyRest(fresh, tried))
                .compose(v -> recordOutcomes(fresh))
                .compose(v -> firstAnswers(seen))
                .compose(v -> openExceptions());
          })
          .map(v -> answerInOrder());
    }

    /** Each callback's answer in batch order; a repeated key answers its first answer, marked duplicate. */
    private List<CallbackResult> answerInOrder() {
      List<CallbackResult> out = new ArrayList<>(batch.size());
      Set<Key> answered = new HashSet<>();
      for (PaymentCallback cb : batch) {
        if (!cb.isSuccess()) {
          out.add(new CallbackResult(CallbackOutcome.IGNORED, cb.orderNo(), ignoredStatus.get(cb.orderNo()), false));
          continue;
        }
        Key key = Key.of(cb);
        CallbackResult r = answers.get(key);
        boolean first = answered.add(key) && cb == primaries.get(key);
        CallbackResult answer = first ? r : r.asDuplicate();
        out.add(conflicts(cb) ? answer.asConflicting() : answer);
      }
      return out;
    }

    /** A SUCCESS whose order or amount differs from its key's first SUCCESS. */
    private boolean conflicts(PaymentCallback cb) {
      PaymentCallback first = firstContent.get(Key.of(cb));
      return first != null && !cb.samePaymentAs(first.orderNo(), first.amountCents());
    }

    /**
     * Rounds of the gate for the fresh callbacks the claiming statement did not try: round k holds the
     * k-th of them of each order, in arrival order (an order's first SUCCESS was tried, or was a duplicate).
     */
    private Future<Void> applyRest(List<PaymentCallback> fresh, List<PaymentCallback> tried) {
      Set<PaymentCallback> done = new HashSet<>(tried);
      Map<String, List<PaymentCallback>> byOrder = new TreeMap<>();
      for (PaymentCallback cb : fresh) {
        if (!done.contains(cb)) {
          byOrder.computeIfAbsent(cb.orderNo(), k -> new ArrayList<>()).add(cb);
        }
      }
      return round(byOrder, 0);
    }

    private Future<Void> round(Map<String, List<PaymentCallback>> byOrder, int k) {
      List<PaymentCallback> candidates = new ArrayList<>();
      for (List<PaymentCallback> list : byOrder.values()) {
        if (list.size() > k) {
          candidates.add(list.get(k));
        }
      }
      if (candidates.isEmpty()) {
        return Future.succeededFuture();
      }
      return pay(candidates)
          .compose(winners -> classifyLosers(candidates, winners, List.of(), false))
          .compose(v -> round(byOrder, k + 1));
    }

    /** The gate and, in the same statement, the winners' side effects (see {@link Sql#PAY_ORDERS}). */
    private Future<List<PaymentCallback>> pay(List<PaymentCallback> candidates) {
      if (candidates.isEmpty()) {
        return Future.succeededFuture(List.of());
      }
      return conn.preparedQuery(payOrders).execute(Params.of(
              strings(candidates, PaymentCallback::orderNo), strings(candidates, PaymentCallback::channel),
              strings(candidates, PaymentCallback::txnId), amounts(candidates), OutboxWriter.SMS_ORDER_PAID,
              strings(candidates, PaymentCallback::currency)))
          .compose(rows -> {
            Set<String> paidOrders = new HashSet<>();
            rows.forEach(row -> paidOrders.add(row.getString("order_no")));
            return won(candidates, cb -> paidOrders.contains(cb.orderNo()));
          });
    }

    /**
     * The candidates whose key the gate let through answer APPLIED; the relay is told once this commits.
     * Then the hook's point, after a gate's UPDATE that had candidates.
     */
    private Future<List<PaymentCallback>> won(List<PaymentCallback> candidates, Predicate<PaymentCallback> paid) {
      if (candidates.isEmpty()) {
        return Future.succeededFuture(List.of());
      }
      List<PaymentCallback> winners = new ArrayList<>();
      for (PaymentCallback cb : candidates) {
        if (paid.test(cb)) {
          winners.add(cb);
          answers.put(Key.of(cb), new CallbackResult(CallbackOutcome.APPLIED, cb.orderNo(), OrderStatus.PAID, false));
        }
      }
      if (!winners.isEmpty()) {
        outbox.written(conn);
      }
      return hook.afterUpdate(conn).map(winners);
    }

    /**
     * The losers read the status they lost to, after the UPDATE, and decide from it. One that reads
     * pending with the right amount lost only because its order's creation committed after the
     * UPDATE began: it goes through the gate once more ({@code retried} the second time).
     */
    private Future<Void> classifyLosers(List<PaymentCallback> candidates, List<PaymentCallback> winners,
                                        List<PaymentCallback> ignored, boolean retried) {
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
          .compose(rows -> {
            Map<String, Row> states = new HashMap<>();
            rows.forEach(row -> states.put(row.getString("order_no"), row));
            List<PaymentCallback> again = new ArrayList<>();
            for (PaymentCallback cb : losers) {
              Row state = states.get(cb.orderNo());
              CallbackOutcome outcome = classify(cb, state);
              if (outcome == null) {
                if (retried) {
                  throw new IllegalStateException("order " + cb.orderNo() + " lost the gate twice but reads pending");
                }
                again.add(cb);
                continue;
              }
              exceptions.add(cb);
              exceptionKinds.add(ExceptionKind.of(outcome));
              answers.put(Key.of(cb), new CallbackResult(outcome, cb.orderNo(), statusOf(state), false));
            }
            for (PaymentCallback cb : ignored) {
              ignoredStatus.put(cb.orderNo(), statusOf(states.get(cb.orderNo())));
            }
            return again.isEmpty() ? Future.<Void>succeededFuture()
                : pay(again).compose(w -> classifyLosers(again, w, List.of(), true));
          });
    }

    /** Why a loser lost; null when it reads pending with the right amount (it may go through again). */
    private static CallbackOutcome classify(PaymentCallback cb, Row state) {
      if (state == null) {
        return CallbackOutcome.UNKNOWN_ORDER;
      }
      return switch (OrderStatus.valueOf(state.getString("status"))) {
        case CANCELLED -> CallbackOutcome.LATE_AFTER_CANCEL;
        case PAID -> CallbackOutcome.DOUBLE_PAYMENT;
        case PENDING_PAYMENT -> state.getLong("amount_cents") != cb.amountCents()
            || (cb.currency() != null && !cb.currency().equals(state.getString("currency")))
            ? CallbackOutcome.AMOUNT_MISMATCH : null;
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

    /** The losers' exceptions and one per distinct conflicting SUCCESS content, in one statement. */
    private Future<Void> openExceptions() {
      Set<Note> conflicting = new HashSet<>();
      for (PaymentCallback cb : batch) {
        if (cb.isSuccess() && conflicts(cb) && conflicting.add(Note.of(cb))) {
          exceptions.add(cb);
          exceptionKinds.add(ExceptionKind.CONFLICTING_DUPLICATE);
        }
      }
      if (exceptions.isEmpty()) {
        return Future.succeededFuture();
      }
      return exceptionRecorder.open(conn, exceptions, exceptionKinds);
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
              Key key = new Key(row.getString("channel"), row.getString("txn_id"));
              answers.put(key, new CallbackResult(
                  CallbackOutcome.valueOf(row.getString("outcome")), row.getString("order_no"),
                  status == null ? null : OrderStatus.valueOf(status), true));
              firstContent.put(key, new PaymentCallback(key.channel(), key.txnId(), row.getString("order_no"),
                  row.getLong("amount_cents"), PaymentCallback.SUCCESS));
            }
            for (PaymentCallback cb : seen) {
              if (!answers.containsKey(Key.of(cb))) {
                throw new IllegalStateException("receipt " + cb.channel() + "/" + cb.txnId() + " has no answer");
              }
            }
            return null;
          });
    }
  }

  private static String[] strings(List<PaymentCallback> cbs, Function<PaymentCallback, String> f) {
    return cbs.stream().map(f).toArray(String[]::new);
  }

  private static Long[] amounts(List<PaymentCallback> cbs) {
    return cbs.stream().map(PaymentCallback::amountCents).toArray(Long[]::new);
  }
}
