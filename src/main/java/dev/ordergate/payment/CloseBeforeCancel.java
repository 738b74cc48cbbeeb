package dev.ordergate.payment;

import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.config.GatewayOpsConfig;
import dev.ordergate.db.AttemptSql;
import dev.ordergate.db.Params;
import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.CancelOutcome;
import dev.ordergate.domain.CancelResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.domain.Rejection;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancelGuard;
import dev.ordergate.gate.PaymentGate;
import dev.ordergate.sweep.ClosePass;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Close before cancel: before any cancellation of an order with OPEN attempts, each attempt is closed
 * at its gateway and then queried (a close alone proves nothing: WeChat Pay answers 204 for an unknown
 * trade). No transaction is open and no row is locked during these calls; the gate decides afterwards.
 * <ul>
 *   <li>paid at the gateway: the payment goes through the payment gate with source PAYMENT_QUERY and the
 *       notification's own idempotency key (channel, txn id); the cancel then loses (ALREADY_PAID), and
 *       the notification, when it lands, is a duplicate. A notification that reaches the gate first wins
 *       the same way: the query's payment is then the duplicate;</li>
 *   <li>closed, or unknown to the gateway: the attempt is CLOSED and the cancel goes through the gate;</li>
 *   <li>the gateway unreachable or erroring: {@code required} keeps the order pending (the sweep retries
 *       every run; a customer or operator cancel answers 503) for at most {@code closeDeferMaxSeconds}
 *       since the first failure, then the attempt is UNCLOSED and the order cancelled with a warning;
 *       {@code bestEffort} gives up at once.</li>
 * </ul>
 * {@code off}: nothing is closed or queried; a cancellation marks the order's OPEN attempts UNCLOSED (the sweep
 * before its claim, a single cancel after it won), as orders were cancelled before issue 10.
 * {@code ordergate_cancel_deferred_total{channel,result}}: result {@code deferred} per postponed
 * cancellation, {@code forced} per attempt given up.
 */
public final class CloseBeforeCancel implements CancelGuard, ClosePass {

  private static final Logger log = LoggerFactory.getLogger(CloseBeforeCancel.class);

  /** What became of one attempt. */
  public enum Settled {
    CLOSED, PAID, DEFERRED, GIVEN_UP
  }

  private final Pool pool;
  private final Map<String, GatewayClient> clients;
  private final PaymentGate paymentGate;
  private final GatewayOpsConfig config;
  private final MeterRegistry registry;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();

  public CloseBeforeCancel(Pool pool, Map<String, GatewayClient> clients, PaymentGate paymentGate,
                           GatewayOpsConfig config, MeterRegistry registry) {
    this.pool = pool;
    this.clients = clients;
    this.paymentGate = paymentGate;
    this.config = config;
    this.registry = registry;
  }

  // ---- a single cancellation (customer, operator) --------------------------------------------

  @Override
  public Future<CancelResult> guard(String orderNo, TransitionSource source, Supplier<Future<CancelResult>> cancel) {
    if (off()) {
      return cancel.get().compose(result -> result.outcome() != CancelOutcome.CANCELLED ? Future.succeededFuture(result)
          : pool.preparedQuery(AttemptSql.GIVE_UP_OF_ORDERS).execute(Params.array(new String[] {orderNo})).map(result));
    }
    return openAttempts(orderNo).compose(attempts -> {
      if (attempts.isEmpty()) {
        return cancel.get();
      }
      return settleAll(attempts, config.gatewayConcurrency()).compose(settled -> {
        if (!settled.contains(Settled.PAID) && settled.contains(Settled.DEFERRED)) {
          return Future.failedFuture(new Rejection(503, "GATEWAY_UNAVAILABLE", "order " + orderNo
              + " has a payment open at a gateway that could not be closed just now; it stays pending, try again"));
        }
        return cancel.get();
      });
    }).compose(result -> result.outcome() != CancelOutcome.CANCELLED ? Future.succeededFuture(result)
        : closeLateOpened(orderNo).map(result));
  }

  /**
   * An attempt stored after the guard listed the attempts but before the gate cancelled: closed now,
   * best effort (a payment found is applied and, the order being cancelled, becomes an exception order).
   */
  private Future<Void> closeLateOpened(String orderNo) {
    return pool.preparedQuery(AttemptSql.BY_ORDER).execute(Params.of(orderNo)).compose(rows -> {
      List<Attempt> open = new ArrayList<>();
      rows.forEach(r -> {
        Attempt a = Attempt.of(r);
        if (a.state().equals("OPEN")) {
          open.add(a);
        }
      });
      if (open.isEmpty()) {
        return Future.succeededFuture();
      }
      log.warn("order {} cancelled while {} payment attempt(s) were being opened; closing them", orderNo, open.size());
      return Future.join(open.stream().map(a -> settle(a, true).recover(e -> Future.succeededFuture(Settled.GIVEN_UP)))
          .toList()).<Void>mapEmpty().recover(e -> Future.succeededFuture());
    });
  }

  private Future<List<Attempt>> openAttempts(String orderNo) {
    return pool.preparedQuery(AttemptSql.OPEN_OF_PENDING_ORDER).execute(Params.of(orderNo)).map(rows -> {
      List<Attempt> out = new ArrayList<>();
      rows.forEach(r -> out.add(Attempt.of(r)));
      return out;
    });
  }

  /** {@code payments.closeBeforeCancel} off: cancel without closing anything (the drill's baseline). */
  private boolean off() {
    return config.closeBeforeCancel() == GatewayOpsConfig.CloseMode.OFF;
  }

  // ---- the sweep's pass ------------------------------------------------------------------------

  @Override
  public Future<Void> run(long graceSeconds, int limit) {
    if (off()) {
      // No close, no query: the claim (which skips OPEN attempts) then cancels these orders as before issue 10.
      return pool.preparedQuery(AttemptSql.GIVE_UP_OF_DUE_ORDERS).execute(Params.of(graceSeconds)).mapEmpty();
    }
    return pool.preparedQuery(AttemptSql.OPEN_OF_DUE_ORDERS).execute(Params.of(graceSeconds, limit))
        .compose(rows -> {
          List<Attempt> attempts = new ArrayList<>();
          for (Row r : rows) {
            attempts.add(Attempt.of(r));
          }
          if (attempts.isEmpty()) {
            return Future.succeededFuture();
          }
          return settleAll(attempts, config.gatewayConcurrency()).map(settled -> {
            log.info("close before cancel: {} attempt(s) of due orders settled: {}", attempts.size(), settled);
            return (Void) null;
          });
        });
  }

  @Override
  public Future<java.util.Set<String>> beforeBatch(java.util.Collection<String> orderNos) {
    if (off()) {
      return pool.preparedQuery(AttemptSql.GIVE_UP_OF_ORDERS).execute(Params.array(orderNos.toArray(String[]::new)))
          .map(rows -> java.util.Set.<String>of());
    }
    return pool.preparedQuery(AttemptSql.OPEN_OF_PENDING_ORDERS).execute(Params.array(orderNos.toArray(String[]::new)))
        .compose(rows -> {
          List<Attempt> attempts = new ArrayList<>();
          rows.forEach(r -> attempts.add(Attempt.of(r)));
          if (attempts.isEmpty()) {
            return Future.succeededFuture(java.util.Set.<String>of());
          }
          return settleEach(attempts, config.gatewayConcurrency()).map(settled -> {
            java.util.Set<String> waiting = new java.util.TreeSet<>();
            settled.forEach((a, result) -> {
              if (result == Settled.DEFERRED) {
                waiting.add(a.orderNo());
              }
            });
            return waiting;
          });
        });
  }

  /** Settles every attempt, at most {@code perChannel} gateway conversations in flight per channel. */
  Future<List<Settled>> settleAll(List<Attempt> attempts, int perChannel) {
    return settleEach(attempts, perChannel).map(m -> List.copyOf(m.values()));
  }

  /** Each attempt's outcome, at most {@code perChannel} gateway conversations in flight per channel. */
  Future<Map<Attempt, Settled>> settleEach(List<Attempt> attempts, int perChannel) {
    Map<String, List<Attempt>> byChannel = new LinkedHashMap<>();
    for (Attempt a : attempts) {
      byChannel.computeIfAbsent(a.channel(), k -> new ArrayList<>()).add(a);
    }
    Map<Attempt, Settled> results = new ConcurrentHashMap<>();
    List<Future<Void>> lanes = new ArrayList<>();
    for (List<Attempt> list : byChannel.values()) {
      java.util.Iterator<Attempt> next = list.iterator();
      for (int i = 0; i < Math.min(perChannel, list.size()); i++) {
        lanes.add(lane(next, results));
      }
    }
    return Future.join(lanes).map(v -> Map.copyOf(results));
  }

  /** One worker: takes the next attempt of its channel when the previous one is settled. */
  private Future<Void> lane(java.util.Iterator<Attempt> next, Map<Attempt, Settled> results) {
    Attempt a;
    synchronized (next) {
      if (!next.hasNext()) {
        return Future.succeededFuture();
      }
      a = next.next();
    }
    Promise<Void> done = Promise.promise();
    settle(a, false).onComplete(ar -> {
      if (ar.succeeded()) {
        results.put(a, ar.result());
      } else {
        log.warn("close before cancel: attempt {} of order {} could not be settled: {}", a.id(), a.orderNo(),
            ar.cause().toString());
        results.put(a, Settled.DEFERRED);
      }
      lane(next, results).onComplete(done);
    });
    return done.future();
  }

  /** Close, then query, then record what the gateway said; {@code giveUp}: a failure is not deferred. */
  Future<Settled> settle(Attempt a, boolean giveUp) {
    GatewayClient client = clients.get(a.channel());
    if (client == null) {
      log.warn("attempt {} of order {}: channel {} can no longer call its gateway; giving it up", a.id(),
          a.orderNo(), a.channel());
      return giveUp(a, "channel not configured for outbound calls");
    }
    return client.close(a.gatewayReference(), a.orderNo())
        // An error answer to the close (e.g. "already paid", Stripe's unexpected state) still leaves the query to decide.
        .recover(err -> err instanceof GatewayFailure g && g.answered() ? Future.succeededFuture() : Future.failedFuture(err))
        .compose(v -> client.query(a.gatewayReference(), a.orderNo()))
        .compose(trade -> switch (trade.state()) {
          case PAID -> applyPaid(a, trade);
          case CLOSED, NOT_FOUND -> pool.preparedQuery(AttemptSql.MARK_CLOSED).execute(Params.of(a.id()))
              .map(Settled.CLOSED);
          case OPEN -> Future.failedFuture(GatewayFailure.unreachable(a.channel(), "STILL_OPEN",
              "the gateway still reports " + trade.gatewayStatus() + " after the close"));
        })
        .recover(err -> failed(a, err, giveUp));
  }

  private Future<Settled> applyPaid(Attempt a, GatewayClient.Trade trade) {
    PaymentCallback cb = new PaymentCallback(a.channel(), trade.txnId(), a.orderNo(), trade.amountCents(),
        PaymentCallback.SUCCESS, "query:" + a.id(), "PAYMENT_QUERY " + trade.gatewayStatus(), trade.currency());
    return paymentGate.apply(List.of(cb), TransitionSource.PAYMENT_QUERY).compose(results -> {
      CallbackResult r = results.get(0);
      log.info("order {}: {} reports attempt {} paid (txn {}); through the gate: {}{}", a.orderNo(), a.channel(),
          a.id(), trade.txnId(), r.outcome(), r.duplicate() ? " (duplicate: the notification came first)" : "");
      if (r.outcome() != CallbackOutcome.APPLIED) {
        log.warn("order {}: payment {} found by query was not applied: {}", a.orderNo(), trade.txnId(), r.outcome());
      }
      return pool.preparedQuery(AttemptSql.MARK_PAID).execute(Params.of(a.id(), trade.txnId())).map(Settled.PAID);
    });
  }

  private Future<Settled> failed(Attempt a, Throwable err, boolean giveUp) {
    String why = err instanceof GatewayFailure g ? g.code() + ": " + g.getMessage() : err.toString();
    return pool.preparedQuery(AttemptSql.MARK_FAILURE).execute(Params.of(a.id(), why)).compose(rows -> {
      if (rows.size() == 0) {
        // No longer OPEN: settled meanwhile by another pass.
        return Future.succeededFuture(Settled.CLOSED);
      }
      double failingFor = rows.iterator().next().getDouble("failing_seconds");
      boolean overdue = failingFor >= config.closeDeferMaxSeconds();
      if (giveUp || config.closeBeforeCancel() == GatewayOpsConfig.CloseMode.BEST_EFFORT || overdue) {
        log.warn("order {}: attempt {} at {} could not be closed ({}), failing for {} s; cancelling without the close "
            + "({})", a.orderNo(), a.id(), a.channel(), why, Math.round(failingFor),
            overdue ? "payments.closeDeferMaxSeconds reached" : "bestEffort");
        return giveUp(a, why);
      }
      count(a.channel(), "deferred");
      log.info("order {}: attempt {} at {} could not be closed ({}); the cancellation waits (failing for {} s of {})",
          a.orderNo(), a.id(), a.channel(), why, Math.round(failingFor), config.closeDeferMaxSeconds());
      return Future.succeededFuture(Settled.DEFERRED);
    });
  }

  private Future<Settled> giveUp(Attempt a, String why) {
    count(a.channel(), "forced");
    return pool.preparedQuery(AttemptSql.MARK_UNCLOSED).execute(Params.of(a.id())).map(Settled.GIVEN_UP);
  }

  private void count(String channel, String result) {
    counters.computeIfAbsent(channel + '\0' + result, k -> Counter.builder("ordergate_cancel_deferred_total")
        .description("Cancellations postponed because a gateway could not close the payment (deferred), and attempts "
            + "given up so the order could be cancelled anyway (forced)")
        .tags("channel", channel, "result", result).register(registry)).increment();
  }
}
