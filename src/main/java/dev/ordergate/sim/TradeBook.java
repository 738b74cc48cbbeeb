package dev.ordergate.sim;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The simulated gateways' trades, with real state: CREATED (Alipay: precreated, not yet scanned, so
 * invisible to query and close), OPEN (payable), PAID, CLOSED. A deadline, when one was set at creation,
 * is enforced: once past, an unpaid trade is CLOSED and cannot be paid.
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

  private final Map<String, Trade> trades = new ConcurrentHashMap<>();
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
    return trades.computeIfAbsent(key(kind, ref),
        k -> new Trade(kind, ref, orderNo, amountCents, currency, deadline, notifyUrl, clientValue, initial));
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
}
