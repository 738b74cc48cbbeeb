package dev.ordergate.sim;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The simulated gateways' trades, with real state: CREATED (Alipay: precreated, not yet scanned, so
 * invisible to query and close), OPEN (payable), PAID, CLOSED. A deadline, when one was set at creation,
 * is enforced: once past, an unpaid trade is CLOSED and cannot be paid.
 *
 * <p>Refunds ({@link #refund}, {@link #refunds}): one per refund id (WeChat out_refund_no, Alipay
 * out_request_no, Stripe Idempotency-Key; ordergate sends its refund id in all three), only on a PAID
 * trade, never more than the trade's amount in total. A refund is PENDING, SUCCEEDED or FAILED; what a
 * new one starts as is set per kind ({@link #refundOutcome}), so tests can have the gateway accept a
 * refund and settle it later ({@link #settle}).
 */
public final class TradeBook {

  public enum State {
    CREATED, OPEN, PAID, CLOSED
  }

  /** One trade. {@code ref}: out_trade_no (WeChat Pay, Alipay) or the PaymentIntent id (Stripe). */
  public static final class Trade {
    public final String kind;
    public final String ref;
    public final String orderNo;
    public final long amountCents;
    public final String currency;
    public final Instant deadline;
    public final String notifyUrl;
    public final String clientValue;
    public State state;
    public String txnId;
    /** When the trade was created and paid (the bills' day and time; issue 10). */
    public Instant createdAt;
    public Instant paidAt;

    Trade(String kind, String ref, String orderNo, long amountCents, String currency, Instant deadline,
          String notifyUrl, String clientValue, State state) {
      this.kind = kind;
      this.ref = ref;
      this.orderNo = orderNo;
      this.amountCents = amountCents;
      this.currency = currency;
      this.deadline = deadline;
      this.notifyUrl = notifyUrl;
      this.clientValue = clientValue;
      this.state = state;
    }
  }

  /** Where a refund stands at the gateway. Bills list the SUCCEEDED ones. */
  public enum RefundState {
    PENDING, SUCCEEDED, FAILED
  }

  /**
   * One refund as the gateway keeps it. {@code refundId}: the merchant's refund id (ordergate's outbox
   * event id); {@code gatewayRefundId}: the gateway's own (WeChat refund_id, Stripe re_...; Alipay has
   * none, it is the trade_no); {@code tradeRef}: the refunded trade's {@link Trade#ref}.
   */
  public static final class Refund {
    public final String kind;
    public final String refundId;
    public final String gatewayRefundId;
    public final String tradeRef;
    public final String txnId;
    public final String orderNo;
    public final long amountCents;
    public final String currency;
    public final Instant createdAt;
    /** Where the gateway sends the refund's notification (WeChat: the request's notify_url), or null. */
    public final String notifyUrl;
    public RefundState state;
    public Instant settledAt;

    Refund(String kind, String refundId, String gatewayRefundId, Trade trade, long amountCents, Instant createdAt,
           String notifyUrl, RefundState state) {
      this.kind = kind;
      this.refundId = refundId;
      this.gatewayRefundId = gatewayRefundId;
      this.tradeRef = trade.ref;
      this.txnId = trade.txnId;
      this.orderNo = trade.orderNo;
      this.amountCents = amountCents;
      this.currency = trade.currency;
      this.createdAt = createdAt;
      this.notifyUrl = notifyUrl;
      this.state = state;
      this.settledAt = state == RefundState.PENDING ? null : createdAt;
    }
  }

  /** Why a refund was refused; each API answers its gateway's own error for it. */
  public enum RefundRefusal {
    /** No such trade (or no such transaction id). */
    UNKNOWN_TRADE,
    /** The trade exists but is not paid (open, closed, or an Alipay trade not scanned yet). */
    NOT_PAID,
    /** This refund would take the trade's refunds above its amount (e.g. already refunded in full). */
    EXCEEDS_AMOUNT,
    /** The refund id was used before for another trade or amount. */
    REFUND_ID_REUSED
  }

  /** {@link #refund}'s answer: the refund (new or, {@code replayed}, the one this refund id made before) or a refusal. */
  public record RefundResult(Refund refund, RefundRefusal refusal, boolean replayed) {}

  private final Map<String, Trade> trades = new ConcurrentHashMap<>();
  /** Per kind, refund id -> refund, in creation order. */
  private final Map<String, Map<String, Refund>> refunds = new ConcurrentHashMap<>();
  private final Map<String, RefundState> refundOutcomes = new ConcurrentHashMap<>();
  private final Clock clock;

  public TradeBook(Clock clock) {
    this.clock = clock;
  }

  private static String key(String kind, String ref) {
    return kind + "/" + ref;
  }

  /** The existing trade of {@code ref}, or a new one in {@code initial}. */
  public synchronized Trade create(String kind, String ref, String orderNo, long amountCents, String currency,
                                   Instant deadline, String notifyUrl, String clientValue, State initial) {
    return trades.computeIfAbsent(key(kind, ref), k -> {
      Trade t = new Trade(kind, ref, orderNo, amountCents, currency, deadline, notifyUrl, clientValue, initial);
      t.createdAt = clock.instant();
      return t;
    });
  }

  /** Every trade of {@code kind}, deadlines applied (the bills read them). */
  public synchronized List<Trade> list(String kind) {
    return trades.values().stream().filter(t -> t.kind.equals(kind)).map(t -> get(t.kind, t.ref)).toList();
  }

  /** The trade after its deadline was applied; null when unknown. */
  public synchronized Trade get(String kind, String ref) {
    Trade t = trades.get(key(kind, ref));
    if (t != null && t.deadline != null && (t.state == State.OPEN || t.state == State.CREATED)
        && !clock.instant().isBefore(t.deadline)) {
      t.state = State.CLOSED;
    }
    return t;
  }

  /** Alipay: the buyer scanned the QR code, so the trade now exists for query and close. */
  public synchronized Trade scan(String kind, String ref) {
    Trade t = get(kind, ref);
    if (t != null && t.state == State.CREATED) {
      t.state = State.OPEN;
    }
    return t;
  }

  /** Pays the trade when it is payable (CREATED counts: an Alipay buyer may scan and pay at once). */
  public synchronized Trade pay(String kind, String ref, String txnId) {
    Trade t = get(kind, ref);
    if (t != null && (t.state == State.OPEN || t.state == State.CREATED)) {
      t.state = State.PAID;
      t.txnId = txnId;
      t.paidAt = clock.instant();
    }
    return t;
  }

  /** Every trade, each after its deadline was applied (the drill reads what was paid where). */
  public synchronized java.util.List<Trade> all() {
    return trades.values().stream().map(t -> get(t.kind, t.ref)).toList();
  }

  /** The simulator's clock (deadlines, Stripe's Checkout Session bounds). */
  public Instant now() {
    return clock.instant();
  }

  /** Closes an OPEN trade; answers the trade as it then is (null: unknown). */
  public synchronized Trade close(String kind, String ref) {
    Trade t = get(kind, ref);
    if (t != null && t.state == State.OPEN) {
      t.state = State.CLOSED;
    }
    return t;
  }

  /** The trade whose gateway transaction id is {@code txnId} (WeChat transaction_id, Alipay trade_no, the PaymentIntent). */
  public synchronized Trade byTxn(String kind, String txnId) {
    if (txnId == null) {
      return null;
    }
    for (Trade t : trades.values()) {
      if (t.kind.equals(kind) && txnId.equals(t.txnId)) {
        return get(kind, t.ref);
      }
    }
    return null;
  }

  /** What the next refunds of {@code kind} start as (default SUCCEEDED; PENDING: settled later by {@link #settle}). */
  public void refundOutcome(String kind, RefundState initial) {
    refundOutcomes.put(kind, initial);
  }

  /**
   * Refunds {@code amountCents} of {@code trade} under the merchant's {@code refundId}, once: the same
   * refund id answers the refund it made before (never a second one), whatever the trade's state now.
   * {@code trade} null: unknown trade. {@code gatewayRefundId} names the new refund at the gateway.
   */
  public synchronized RefundResult refund(String kind, Trade trade, String refundId, long amountCents,
                                          String gatewayRefundId, String notifyUrl) {
    Map<String, Refund> ofKind = refunds.computeIfAbsent(kind, k -> new LinkedHashMap<>());
    Refund before = ofKind.get(refundId);
    if (before != null) {
      boolean same = trade != null && before.tradeRef.equals(trade.ref) && before.amountCents == amountCents;
      return same ? new RefundResult(before, null, true) : new RefundResult(null, RefundRefusal.REFUND_ID_REUSED, false);
    }
    if (trade == null) {
      return new RefundResult(null, RefundRefusal.UNKNOWN_TRADE, false);
    }
    Trade t = get(kind, trade.ref);
    if (t.state != State.PAID) {
      return new RefundResult(null, RefundRefusal.NOT_PAID, false);
    }
    long refunded = ofKind.values().stream().filter(r -> r.tradeRef.equals(t.ref) && r.state != RefundState.FAILED)
        .mapToLong(r -> r.amountCents).sum();
    if (amountCents <= 0 || refunded + amountCents > t.amountCents) {
      return new RefundResult(null, RefundRefusal.EXCEEDS_AMOUNT, false);
    }
    Refund r = new Refund(kind, refundId, gatewayRefundId, t, amountCents, clock.instant(), notifyUrl,
        refundOutcomes.getOrDefault(kind, RefundState.SUCCEEDED));
    ofKind.put(refundId, r);
    return new RefundResult(r, null, false);
  }

  /** The refund of {@code refundId}, or null. */
  public synchronized Refund refundOf(String kind, String refundId) {
    return refunds.getOrDefault(kind, Map.of()).get(refundId);
  }

  /** Settles a PENDING refund (SUCCEEDED or FAILED); a settled one stays as it is. Null: unknown refund id. */
  public synchronized Refund settle(String kind, String refundId, RefundState to) {
    Refund r = refundOf(kind, refundId);
    if (r != null && r.state == RefundState.PENDING && to != RefundState.PENDING) {
      r.state = to;
      r.settledAt = clock.instant();
    }
    return r;
  }

  /**
   * Every refund of {@code kind} in the order they were made (all states; a bill lists the SUCCEEDED
   * ones, by {@link Refund#settledAt}). A snapshot: later refunds do not change the list.
   */
  public synchronized List<Refund> refunds(String kind) {
    return List.copyOf(new ArrayList<>(refunds.getOrDefault(kind, Map.of()).values()));
  }

  /** How many refunds (any state) were made on the trade {@code tradeRef}: a test's "refunded exactly once". */
  public synchronized int refundCount(String kind, String tradeRef) {
    return (int) refunds.getOrDefault(kind, Map.of()).values().stream().filter(r -> r.tradeRef.equals(tradeRef)).count();
  }
}
