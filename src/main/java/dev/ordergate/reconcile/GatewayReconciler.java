package dev.ordergate.reconcile;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.GatewayBill;
import dev.ordergate.channel.GatewayBill.BillLine;
import dev.ordergate.channel.GatewayBill.Kind;
import dev.ordergate.channel.GatewayBills;
import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayClients;
import dev.ordergate.channel.Outbound;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.db.GatewayReconcileSql;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.domain.Rejection;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.PaymentGate;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Reconciles one channel's day against its gateway's bill ({@link GatewayBill}) and our books:
 * <ul>
 *   <li>every payment line must have our receipt (channel, txn id), with the same amount and currency;
 *       without one it is a lost notification ({@link GatewayCheck#MISSING_RECEIPT}): reported, and with
 *       {@code apply} put through the payment gate with source PAYMENT_QUERY and the notification's own
 *       idempotency key, exactly as close-before-cancel applies a query's answer (the gate decides: PAID, or an
 *       exception order when the order was cancelled meanwhile; the late notification is then a duplicate);</li>
 *   <li>every SUCCESS receipt we received that day (before the bill was asked for) must be on the bill; one that is not is queried at the
 *       gateway (a payment at 23:59:59 may be billed the next day) and is a finding unless the query says paid,
 *       with the same txn;</li>
 *   <li>every refund line must be a refund here (an exception order REFUND_PENDING or REFUNDED, same amount),
 *       and every exception order whose refund was confirmed that day (before the bill was asked for) must be on
 *       the bill.</li>
 * </ul>
 * Read only unless {@code apply}; the gateway calls are made outside any transaction. A gateway that cannot
 * be reached fails the run ({@link dev.ordergate.channel.GatewayFailure}): nothing is concluded from half a bill.
 */
public final class GatewayReconciler {

  private static final Logger log = LoggerFactory.getLogger(GatewayReconciler.class);
  /** Receipts missing from the bill that are queried one by one; beyond, they are reported unqueried. */
  static final int MAX_QUERIES = 200;
  static final int APPLY_BATCH = 100;

  private final Pool pool;
  private final Map<String, ChannelConfig> channels;
  private final Map<String, GatewayBill> bills;
  private final Map<String, GatewayClient> clients;
  private final PaymentGate gate;

  public GatewayReconciler(Pool pool, Map<String, ChannelConfig> channels, Map<String, GatewayBill> bills,
                           Map<String, GatewayClient> clients, PaymentGate gate) {
    this.pool = pool;
    this.channels = channels;
    this.bills = bills;
    this.clients = clients;
    this.gate = gate;
  }

  /** The reconciler of every configured gateway channel, with its bill sources and clients on {@code outbound}. */
  public static GatewayReconciler create(Pool pool, Map<String, ChannelConfig> channels, Outbound outbound, Clock clock,
                                         PaymentGate gate) {
    return new GatewayReconciler(pool, channels, GatewayBills.all(channels, outbound, clock),
        GatewayClients.all(channels, outbound, clock), gate);
  }

  /** The channels that have a bill to reconcile against. */
  public List<String> channels() {
    return bills.keySet().stream().sorted().toList();
  }

  /** Report only: nothing is written. */
  public Future<GatewayReport> run(String channel, LocalDate day) {
    return run(channel, day, false);
  }

  /**
   * Reconciles {@code channel}'s {@code day} (the gateway's day: China time for WeChat Pay and Alipay, UTC for
   * Stripe); {@code apply}: missing payments go through the payment gate. 400 {@code UNKNOWN_CHANNEL} /
   * {@code CHANNEL_HAS_NO_BILL} as a {@link Rejection}; the gateway's failure as a GatewayFailure.
   */
  public Future<GatewayReport> run(String channel, LocalDate day, boolean apply) {
    ChannelConfig config = channels.get(channel);
    if (config == null) {
      return Future.failedFuture(new Rejection(400, "UNKNOWN_CHANNEL", "no channel " + channel + " is configured"));
    }
    GatewayBill bill = bills.get(channel);
    if (bill == null) {
      return Future.failedFuture(new Rejection(400, "CHANNEL_HAS_NO_BILL", "channel " + channel + " is of kind "
          + config.kind().id() + " or lacks its outbound keys: it has no gateway bill to reconcile against"));
    }
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    ZoneId zone = bill.zone();
    OffsetDateTime from = day.atStartOfDay(zone).toOffsetDateTime().withOffsetSameInstant(ZoneOffset.UTC);
    OffsetDateTime to = day.plusDays(1).atStartOfDay(zone).toOffsetDateTime().withOffsetSameInstant(ZoneOffset.UTC);
    // What happens here after the bill was asked for cannot be on it (a receipt or a refund confirmed since):
    // the day's checks of our side end there.
    OffsetDateTime asked = OffsetDateTime.now(ZoneOffset.UTC);
    OffsetDateTime until = asked.isBefore(to) ? asked : to;
    return bill.fetch(day).compose(lines -> {
      Run run = new Run(channel, config, lines);
      return run.payments(apply)
          .compose(v -> run.receiptsOfDay(from, until))
          .compose(v -> run.refunds(from, until))
          .map(v -> new GatewayReport(channel, day, zone.getId(), apply, started, (System.nanoTime() - t0) / 1_000_000,
              (int) lines.stream().filter(l -> l.kind() == Kind.PAYMENT).count(),
              (int) lines.stream().filter(l -> l.kind() == Kind.REFUND).count(), run.receiptsOfDay,
              run.confirmedByQuery, List.copyOf(run.findings)));
    }).onSuccess(report -> report.findings().forEach(f -> log.warn("gateway reconciliation {} {}: {}", channel, day, f.line())));
  }

  /** One run's state: the bill, what it found. */
  private final class Run {
    final String channel;
    final ChannelConfig config;
    final List<BillLine> payments = new ArrayList<>();
    final List<BillLine> refunds = new ArrayList<>();
    final List<GatewayFinding> findings = new ArrayList<>();
    int receiptsOfDay;
    int confirmedByQuery;

    Run(String channel, ChannelConfig config, List<BillLine> lines) {
      this.channel = channel;
      this.config = config;
      lines.forEach(l -> (l.kind() == Kind.PAYMENT ? payments : refunds).add(l));
    }

    Future<Void> payments(boolean apply) {
      String[] txns = payments.stream().map(BillLine::txnId).distinct().toArray(String[]::new);
      return pool.preparedQuery(GatewayReconcileSql.RECEIPTS_BY_TXN).execute(Tuple.tuple().addValue(channel).addValue(txns)).compose(rows -> {
        Map<String, Row> ours = new HashMap<>();
        rows.forEach(r -> ours.put(r.getString("txn_id"), r));
        Map<String, BillLine> missing = new LinkedHashMap<>();
        for (BillLine l : payments) {
          Row r = ours.get(l.txnId());
          if (r == null) {
            missing.putIfAbsent(l.txnId(), l);
            continue;
          }
          String ourCurrency = r.getString("currency") == null ? config.currency() : r.getString("currency");
          if (r.getLong("amount_cents") != l.amountCents() || (l.currency() != null && !l.currency().equalsIgnoreCase(ourCurrency))) {
            findings.add(new GatewayFinding(GatewayCheck.AMOUNT_DIFFERS, l.orderNo(), l.txnId(), null, l.amountCents(),
                r.getLong("amount_cents"), "the gateway billed " + l.amountCents() + " " + l.currency() + ", our receipt says "
                    + r.getLong("amount_cents") + " " + ourCurrency + " (" + r.getString("outcome") + ")", null));
          }
        }
        List<GatewayFinding> lost = new ArrayList<>();
        missing.values().forEach(l -> lost.add(new GatewayFinding(GatewayCheck.MISSING_RECEIPT, l.orderNo(), l.txnId(), null,
            l.amountCents(), null, "paid at the gateway (" + l.status() + "), no receipt here", null)));
        if (!apply || lost.isEmpty()) {
          findings.addAll(lost);
          return Future.succeededFuture();
        }
        return applyFrom(new ArrayList<>(missing.values()), lost, 0);
      });
    }

    /** Puts the missing payments through the gate, in batches, as a query's answer is. */
    private Future<Void> applyFrom(List<BillLine> lines, List<GatewayFinding> lost, int from) {
      if (from >= lines.size()) {
        return Future.succeededFuture();
      }
      List<BillLine> batch = lines.subList(from, Math.min(lines.size(), from + APPLY_BATCH));
      List<PaymentCallback> callbacks = batch.stream().map(l -> new PaymentCallback(channel, l.txnId(), l.orderNo(),
          l.amountCents(), PaymentCallback.SUCCESS, "bill:" + l.txnId(), "GATEWAY_BILL " + l.status(), l.currency())).toList();
      return gate.apply(callbacks, TransitionSource.PAYMENT_QUERY).compose(results -> {
        for (int i = 0; i < batch.size(); i++) {
          CallbackResult r = results.get(i);
          findings.add(lost.get(from + i).resolved(r.outcome().name() + (r.duplicate() ? " (duplicate: its notification came first)" : "")));
          log.warn("order {}: payment {} of the {} bill had no receipt; through the gate: {}", batch.get(i).orderNo(),
              batch.get(i).txnId(), channel, r.outcome());
        }
        return applyFrom(lines, lost, from + APPLY_BATCH);
      });
    }

    Future<Void> receiptsOfDay(OffsetDateTime from, OffsetDateTime to) {
      Map<String, BillLine> billed = new HashMap<>();
      payments.forEach(l -> billed.put(l.txnId(), l));
      return pool.preparedQuery(GatewayReconcileSql.RECEIPTS_OF_DAY).execute(Tuple.of(channel, from, to)).compose(rows -> {
        List<Row> unbilled = new ArrayList<>();
        for (Row r : rows) {
          receiptsOfDay++;
          if (!billed.containsKey(r.getString("txn_id"))) {
            unbilled.add(r);
          }
        }
        return confirmFrom(unbilled, 0);
      });
    }

    /** Asks the gateway about each receipt the bill does not list, one at a time. */
    private Future<Void> confirmFrom(List<Row> unbilled, int i) {
      if (i >= unbilled.size()) {
        return Future.succeededFuture();
      }
      Row r = unbilled.get(i);
      String txn = r.getString("txn_id");
      String orderNo = r.getString("order_no");
      long amount = r.getLong("amount_cents");
      GatewayClient client = clients.get(channel);
      if (client == null || i >= MAX_QUERIES) {
        findings.add(new GatewayFinding(GatewayCheck.NOT_PAID_AT_GATEWAY, orderNo, txn, null, null, amount,
            "our receipt (" + r.getString("outcome") + ") is not on the bill (not queried)", null));
        return confirmFrom(unbilled, i + 1);
      }
      String reference = config.kind() == ChannelKind.STRIPE ? txn : orderNo;
      return client.query(reference, orderNo).compose(trade -> {
        if (trade.state() == GatewayClient.TradeState.PAID && txn.equals(trade.txnId())) {
          confirmedByQuery++;
        } else {
          findings.add(new GatewayFinding(GatewayCheck.NOT_PAID_AT_GATEWAY, orderNo, txn, null,
              trade.state() == GatewayClient.TradeState.PAID ? trade.amountCents() : null, amount,
              "our receipt (" + r.getString("outcome") + ") is not on the bill and the gateway's query says "
                  + trade.state() + " " + trade.gatewayStatus()
                  + (trade.txnId() != null && !txn.equals(trade.txnId()) ? " with txn " + trade.txnId() : ""), null));
        }
        return confirmFrom(unbilled, i + 1);
      });
    }

    Future<Void> refunds(OffsetDateTime from, OffsetDateTime to) {
      String[] txns = refunds.stream().map(BillLine::txnId).distinct().toArray(String[]::new);
      return pool.preparedQuery(GatewayReconcileSql.REFUNDS_BY_TXN).execute(Tuple.tuple().addValue(channel).addValue(txns)).compose(rows -> {
        Map<String, Row> ours = new HashMap<>();
        rows.forEach(r -> ours.put(r.getString("txn_id"), r));
        for (BillLine l : refunds) {
          Row r = ours.get(l.txnId());
          if (r == null) {
            findings.add(new GatewayFinding(GatewayCheck.REFUND_NOT_HERE, l.orderNo(), l.txnId(), l.refundId(),
                l.amountCents(), null, "refunded at the gateway (" + l.status() + "), no refund of this payment here", null));
          } else if (r.getLong("amount_cents") != l.amountCents()) {
            findings.add(new GatewayFinding(GatewayCheck.REFUND_AMOUNT_DIFFERS, r.getString("order_no"), l.txnId(),
                l.refundId(), l.amountCents(), r.getLong("amount_cents"), "the gateway refunded " + l.amountCents()
                    + ", our exception order (" + r.getString("status") + ") is for " + r.getLong("amount_cents"), null));
          }
        }
        return pool.preparedQuery(GatewayReconcileSql.REFUNDED_OF_DAY).execute(Tuple.of(channel, from, to));
      }).map(rows -> {
        for (Row r : rows) {
          String txn = r.getString("txn_id");
          if (refunds.stream().noneMatch(l -> Objects.equals(l.txnId(), txn))) {
            findings.add(new GatewayFinding(GatewayCheck.REFUND_NOT_AT_GATEWAY, r.getString("order_no"), txn, null, null,
                r.getLong("amount_cents"), "REFUNDED here that day, no refund of this payment on the gateway's bill", null));
          }
        }
        return null;
      });
    }
  }
}
