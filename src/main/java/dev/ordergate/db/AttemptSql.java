package dev.ordergate.db;

/** SQL of payment attempts and close before cancel (issue 10). */
public final class AttemptSql {

  private AttemptSql() {
  }

  private static final String COLUMNS = """
      id, order_no, channel, kind, gateway_reference, state, amount_cents, currency, client_field, client_value,
      gateway_expires_at, created_at, updated_at, closed_at, paid_txn_id, close_failures, close_failing_since,
      last_close_error""";

  public static final String ORDER = """
      SELECT order_no, status, amount_cents, currency, expires_at, expires_at <= now() AS expired
      FROM orders WHERE order_no = $1""";

  public static final String BY_ORDER_AND_CHANNEL = "SELECT " + COLUMNS
      + " FROM payment_attempts WHERE order_no = $1 AND channel = $2";

  public static final String BY_ORDER = "SELECT " + COLUMNS
      + " FROM payment_attempts WHERE order_no = $1 ORDER BY id";

  /**
   * The order's attempts as the API shows them: {@code recorded_state} is what close before cancel last
   * learnt at the gateway; {@code state} is derived at read time (nothing is written on the callback's hot
   * path): PAID when a payment of the attempt's amount arrived through its channel (its notification, or the
   * query; applied or not: the gateway took the money), CLOSED when the stored state is OPEN or UNCLOSED
   * but the trade's own deadline has passed (WeChat Pay and Alipay {@code time_expire}, a Checkout Session's
   * {@code expires_at}; a bare PaymentIntent has none), else the recorded state.
   */
  public static final String READ_BY_ORDER = "SELECT "
      + COLUMNS.replace("\n", " ").replaceAll("(\\w+)", "a.$1").replace("a.state,", "").replace("a.paid_txn_id,", "")
      + """
      , a.state AS recorded_state,
             CASE WHEN p.txn_id IS NOT NULL THEN 'PAID'
                  WHEN a.state IN ('OPEN', 'UNCLOSED') AND a.gateway_expires_at <= now()
                       AND NOT (a.kind = 'stripe' AND a.gateway_reference NOT LIKE 'cs\\_%') THEN 'CLOSED'
                  ELSE a.state END AS state,
             coalesce(a.paid_txn_id, p.txn_id) AS paid_txn_id
      FROM payment_attempts a
      LEFT JOIN LATERAL (
        SELECT r.txn_id FROM payment_receipts r
        WHERE r.order_no = a.order_no AND r.channel = a.channel AND r.amount_cents = a.amount_cents
        ORDER BY (r.outcome = 'APPLIED') DESC, r.id LIMIT 1) p ON true
      WHERE a.order_no = $1
      ORDER BY a.id""";

  /**
   * Stores an attempt the gateway has opened, only while its order is pending: the order row is held
   * FOR SHARE by this one statement (no network call inside), so a cancellation either committed
   * before (no row: the caller closes the trade it opened) or waits for this insert and then sees it.
   */
  public static final String INSERT = """
      WITH o AS (SELECT order_no FROM orders WHERE order_no = $1 AND status = 'PENDING_PAYMENT' FOR SHARE)
      INSERT INTO payment_attempts (order_no, channel, kind, gateway_reference, state, amount_cents, currency,
                                    client_field, client_value, gateway_expires_at)
      SELECT o.order_no, $2, $3, $4, 'OPEN', $5, $6, $7, $8, $9 FROM o
      ON CONFLICT (order_no, channel) DO NOTHING
      RETURNING\s""" + COLUMNS;

  /** The OPEN attempts of one order that is still pending. */
  public static final String OPEN_OF_PENDING_ORDER = "SELECT " + COLUMNS.replace("\n", " ").replaceAll("(\\w+)", "a.$1")
      + """
       FROM payment_attempts a JOIN orders o ON o.order_no = a.order_no
      WHERE a.order_no = $1 AND a.state = 'OPEN' AND o.status = 'PENDING_PAYMENT'
      ORDER BY a.id""";

  /** The OPEN attempts of those of the orders {@code $1} (text[]) that are still pending. */
  public static final String OPEN_OF_PENDING_ORDERS = "SELECT " + COLUMNS.replace("\n", " ").replaceAll("(\\w+)", "a.$1")
      + """
       FROM payment_attempts a JOIN orders o ON o.order_no = a.order_no
      WHERE a.order_no = ANY($1::text[]) AND a.state = 'OPEN' AND o.status = 'PENDING_PAYMENT'
      ORDER BY a.id""";

  /** The close pass: OPEN attempts of due orders (past expiry + {@code $1} s), oldest expiry first, at most {@code $2}. */
  public static final String OPEN_OF_DUE_ORDERS = "SELECT " + COLUMNS.replace("\n", " ").replaceAll("(\\w+)", "a.$1")
      + """
       FROM payment_attempts a JOIN orders o ON o.order_no = a.order_no
      WHERE a.state = 'OPEN' AND o.status = 'PENDING_PAYMENT' AND o.expires_at <= now() - make_interval(secs => $1)
      ORDER BY o.expires_at, a.id
      LIMIT $2""";

  public static final String MARK_CLOSED = """
      UPDATE payment_attempts SET state = 'CLOSED', closed_at = now(), updated_at = now(), close_failing_since = NULL
      WHERE id = $1 AND state = 'OPEN'""";

  public static final String MARK_PAID = """
      UPDATE payment_attempts SET state = 'PAID', paid_txn_id = $2, updated_at = now(), close_failing_since = NULL
      WHERE id = $1 AND state IN ('OPEN', 'UNCLOSED')""";

  /** One more failed close; answers for how many seconds it has been failing. */
  public static final String MARK_FAILURE = """
      UPDATE payment_attempts SET close_failures = close_failures + 1,
             close_failing_since = coalesce(close_failing_since, now()), last_close_error = left($2, 500),
             updated_at = now()
      WHERE id = $1 AND state = 'OPEN'
      RETURNING extract(epoch FROM now() - close_failing_since)::float8 AS failing_seconds""";

  public static final String MARK_UNCLOSED = """
      UPDATE payment_attempts SET state = 'UNCLOSED', updated_at = now() WHERE id = $1 AND state = 'OPEN'""";

  /** {@code payments.closeBeforeCancel} off: the order's OPEN attempts are given up without a gateway call. */
  public static final String GIVE_UP_OF_ORDERS = """
      UPDATE payment_attempts SET state = 'UNCLOSED', updated_at = now(),
             last_close_error = 'not closed: payments.closeBeforeCancel is off'
      WHERE order_no = ANY($1::text[]) AND state = 'OPEN'""";

  /** Likewise for the sweep: the OPEN attempts of due pending orders (past expiry + {@code $1} s). */
  public static final String GIVE_UP_OF_DUE_ORDERS = """
      UPDATE payment_attempts a SET state = 'UNCLOSED', updated_at = now(),
             last_close_error = 'not closed: payments.closeBeforeCancel is off'
      FROM orders o
      WHERE o.order_no = a.order_no AND a.state = 'OPEN' AND o.status = 'PENDING_PAYMENT'
        AND o.expires_at <= now() - make_interval(secs => $1)""";
}
