package dev.ordergate.db;

import io.vertx.sqlclient.SqlConnectOptions;

/**
 * Every SQL statement of the service, in one place. {@code 'PENDING_PAYMENT'} stays a literal in
 * statements that must use the partial index {@code orders_pending_expiry}: a bind parameter would
 * lose it under a generic plan.
 */
public final class Sql {

  private Sql() {
  }

  // ---- orders ------------------------------------------------------------------------------

  /** Creates the order unless its number is taken; the discount is the coupon's, floored at 0. */
  public static final String INSERT_ORDER = """
      INSERT INTO orders (order_no, user_id, status, amount_cents, coupon_code, request_hash, expires_at, currency)
      VALUES ($1, $2, 'PENDING_PAYMENT',
              greatest(0, $3 - coalesce((SELECT discount_cents FROM coupons WHERE code = $4), 0)),
              $4, $5, now() + make_interval(secs => $6), $7)
      ON CONFLICT (order_no) DO NOTHING
      RETURNING order_no""";

  public static final String ORDER_REQUEST_HASH = "SELECT request_hash FROM orders WHERE order_no = $1";

  public static final String INSERT_ITEMS = """
      INSERT INTO order_items (order_no, sku, qty, unit_price_cents)
      SELECT $1, x.sku, x.qty, x.price FROM unnest($2::text[], $3::int[], $4::bigint[]) AS x(sku, qty, price)""";

  /** Row locks on stock in one global order (by SKU), so concurrent writers cannot deadlock. */
  public static final String LOCK_STOCK = "SELECT sku FROM inventory WHERE sku = ANY($1::text[]) ORDER BY sku FOR UPDATE";

  /** Conditional take: a SKU short of stock returns no row, and the caller rolls back. */
  public static final String TAKE_STOCK = """
      UPDATE inventory i SET available = i.available - x.qty, updated_at = now()
      FROM unnest($1::text[], $2::int[]) AS x(sku, qty)
      WHERE i.sku = x.sku AND i.available >= x.qty
      RETURNING i.sku""";

  public static final String LEDGER_TAKE = """
      INSERT INTO inventory_ledger (sku, delta, kind, order_no, actor)
      SELECT x.sku, -x.qty, 'TAKE', $1, $2 FROM unnest($3::text[], $4::int[]) AS x(sku, qty)""";

  public static final String LOCK_COUPON = """
      UPDATE coupons SET status = 'LOCKED', order_no = $2, updated_at = now()
      WHERE code = $1 AND status = 'AVAILABLE' AND user_id = $3
      RETURNING code""";

  public static final String TRANSITION_CREATED = """
      INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
      VALUES ($1, NULL, 'PENDING_PAYMENT', $2, $3, $4)""";

  public static final String SELECT_ORDER = """
      SELECT o.order_no, o.user_id, o.status, o.amount_cents, o.currency, o.coupon_code, o.created_at, o.expires_at,
             o.paid_at, o.cancelled_at, o.paid_txn_id, o.closed_by,
             (SELECT json_agg(json_build_object('sku', i.sku, 'qty', i.qty, 'unitPriceCents', i.unit_price_cents)
                              ORDER BY i.sku)
                FROM order_items i WHERE i.order_no = o.order_no) AS items
      FROM orders o WHERE o.order_no = $1""";

  public static final String SELECT_TRANSITIONS = """
      SELECT from_status, to_status, source, actor, reference, at
      FROM order_transitions WHERE order_no = $1 ORDER BY id""";

  public static final String ORDER_STATUS = "SELECT status FROM orders WHERE order_no = $1";

  // ---- the gate: cancellation ---------------------------------------------------------------

  /** The one exit to CANCELLED for a single order. Whoever changes the row wins. */
  public static final String CANCEL_ONE = """
      UPDATE orders SET status = 'CANCELLED', cancelled_at = now(), closed_by = $2
      WHERE order_no = $1 AND status = 'PENDING_PAYMENT'
      RETURNING order_no""";

  /**
   * A timeout trigger's claim on the orders {@code $1} (text[]) that are due: rows another
   * transaction holds (a payment in flight) are skipped, not waited for; the trigger tries them again.
   */
  public static final String CLAIM_EXPIRED = """
      SELECT order_no FROM orders
      WHERE order_no = ANY($1::text[]) AND status = 'PENDING_PAYMENT' AND expires_at <= now()
      ORDER BY order_no
      FOR UPDATE SKIP LOCKED""";

  /**
   * The exit to CANCELLED for a timeout trigger ({@code $2} its source), in one statement: the claim
   * {@link #CLAIM_EXPIRED} on the orders {@code $1} (text[]), then one conditional UPDATE of the claimed
   * rows, like {@link #CANCEL_ONE} and only once an order has expired by the database's clock (an early
   * trigger changes nothing). Answers the orders cancelled, with their lateness; the sweep's twin is
   * {@link SweepSql#CLAIM_AND_CANCEL}.
   */
  public static final String CLAIM_AND_CANCEL_EXPIRED = """
      WITH claimed AS (
      """ + CLAIM_EXPIRED + """
      )
      UPDATE orders o SET status = 'CANCELLED', cancelled_at = now(), closed_by = $2
      FROM claimed
      WHERE o.order_no = claimed.order_no AND o.status = 'PENDING_PAYMENT' AND o.expires_at <= now()
      RETURNING o.order_no, extract(epoch FROM o.cancelled_at - o.expires_at)::float8 AS lateness_seconds""";

  /** A timeout trigger's losers ({@code $1}, text[]): their status, and how long until expiry (0 when expired). */
  public static final String ORDER_EXPIRIES = """
      SELECT order_no, status, greatest(0, ceil(extract(epoch FROM expires_at - now()) * 1000))::bigint AS due_in_ms
      FROM orders WHERE order_no = ANY($1::text[])""";

  /**
   * A won cancellation's side effects but the stock, in one statement, set-based over exactly the orders
   * {@code $1} (text[]) the gate returned: a RETURN ledger row per item, the coupon released, one transition
   * per order ({@code $4}, {@code $5}: per-order actor and reference) and ORDER_CANCELLED then NOTIFY_SMS in
   * the outbox ({@code $2} the source, {@code $3} the SMS template). The CTEs touch different tables and none
   * reads another's rows, so their order inside the statement does not matter. The stock follows in
   * {@link #LOCK_STOCK_OF_ORDERS} and {@link #RESTOCK_ORDERS}, last before the commit.
   */
  public static final String CANCELLATION_EFFECTS = """
      WITH ledger AS (
          INSERT INTO inventory_ledger (sku, delta, kind, order_no, actor)
          SELECT sku, qty, 'RETURN', order_no, $2 FROM order_items WHERE order_no = ANY($1::text[])),
      released AS (
          UPDATE coupons SET status = 'AVAILABLE', order_no = NULL, updated_at = now()
          WHERE order_no = ANY($1::text[]) AND status = 'LOCKED'),
      logged AS (
          INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
          SELECT x.order_no, 'PENDING_PAYMENT', 'CANCELLED', $2, x.actor, x.reference
          FROM unnest($1::text[], $4::text[], $5::text[]) AS x(order_no, actor, reference))
      """ + OutboxSql.INSERT_CANCELLED_EVENTS;

  /**
   * The stock rows of the orders {@code $1} (text[]), locked in SKU order, the one global order that keeps
   * concurrent writers of stock free of deadlocks: a statement of its own, because an UPDATE (or an UPDATE in
   * a CTE) locks its rows in whatever order its plan reads them.
   */
  public static final String LOCK_STOCK_OF_ORDERS = """
      SELECT i.sku FROM inventory i
      WHERE i.sku IN (SELECT sku FROM order_items WHERE order_no = ANY($1::text[]))
      ORDER BY i.sku FOR UPDATE OF i""";

  /** Every item of the orders {@code $1} (text[]) back in stock, after {@link #LOCK_STOCK_OF_ORDERS}. */
  public static final String RESTOCK_ORDERS = """
      UPDATE inventory i SET available = i.available + t.qty, updated_at = now()
      FROM (SELECT sku, sum(qty)::int AS qty FROM order_items WHERE order_no = ANY($1::text[]) GROUP BY sku) t
      WHERE i.sku = t.sku""";

  // ---- the gate: payment --------------------------------------------------------------------

  /**
   * A batch's first statement: records every verified delivery ({@code $6..$13}: one row per distinct
   * content, with its delivery count, sorted by key), claims the idempotency key of the SUCCESS ones
   * ({@code $1..$5}, {@code $14} the currency; in key order) and, for the claimed keys among
   * {@code $16, $17} (channel, txn id: the first SUCCESS of each order), goes through the gate with its
   * side effects as {@link #PAY_ORDERS} does ({@code $15} the SMS template). One round trip for a batch
   * of first payments.
   *
   * <p>Rows that come back are the claimed keys, new receipts, with {@code paid} true for those the gate
   * let through; the other keys were received before. A non-final status never claims. A receipt is
   * written with the answer APPLIED / PAID, so the common path writes it once: the transaction corrects
   * it for a claimed callback that does not win ({@link #RECORD_OUTCOMES}) before it commits, and no
   * other transaction can read it before then. The gate reads {@code claimed}'s RETURNING rows, so no
   * order is paid for a key this statement did not claim.
   */
  public static final String CLAIM_AND_PAY = claimAndPay("PAYMENT_CALLBACK");

  /** {@link #CLAIM_AND_PAY} for a payment found by querying the gateway (close before cancel, issue 10). */
  public static final String CLAIM_AND_PAY_BY_QUERY = claimAndPay("PAYMENT_QUERY");

  /**
   * {@link #CLAIM_AND_PAY} for a batch whose every callback is its order's first SUCCESS, with one key each
   * ({@code $16, $17} the same keys as {@code $1, $2}), run without {@code BEGIN} and {@code COMMIT}: the
   * statement is its own transaction, and it commits only if every key was claimed here and every order let
   * through. Otherwise {@code gate_all_won} (V21) raises {@link #NOT_ALL_WON} at the end of the statement,
   * which undoes all of it, and the batch goes again in a transaction of its own, where the losers are told
   * apart. It returns one row, {@code won} true, when it commits. One round trip and one statement fewer than
   * {@code BEGIN}, {@link #CLAIM_AND_PAY}, {@code COMMIT} for the common batch (issue 13).
   */
  public static final String CLAIM_AND_PAY_ALL = claimAndPayAll("PAYMENT_CALLBACK");

  /** {@link #CLAIM_AND_PAY_ALL} for payments found by querying the gateway. */
  public static final String CLAIM_AND_PAY_ALL_BY_QUERY = claimAndPayAll("PAYMENT_QUERY");

  /** The SQLSTATE {@code gate_all_won} raises: not every callback of an all-or-nothing batch won. */
  public static final String NOT_ALL_WON = "OG001";

  /**
   * Which statements a connection keeps prepared (the pool's {@code preparedStatementCacheSqlFilter}): the
   * client's default, shorter than 2,048 characters, and the claiming statements, which are longer. A
   * statement not kept is parsed and planned at every execution: {@link #CLAIM_AND_PAY} (2,979 characters)
   * spent 62 to 77 of its 245 to 268 µs per callback in planning at 2,800 callbacks/s until it was kept
   * (pg_stat_statements, issue 13). Other long statements (reconciliation, the console's reports, the
   * relay's walks, which are planned per execution on purpose) keep the default.
   */
  public static boolean keptPrepared(String sql) {
    return sql.length() < SqlConnectOptions.DEFAULT_PREPARED_STATEMENT_CACHE_SQL_LIMIT
        || sql.equals(CLAIM_AND_PAY) || sql.equals(CLAIM_AND_PAY_BY_QUERY)
        || sql.equals(CLAIM_AND_PAY_ALL) || sql.equals(CLAIM_AND_PAY_ALL_BY_QUERY);
  }

  private static String claimAndPay(String source) {
    return claimAndPay(source, "c.channel, c.txn_id, p.order_no IS NOT NULL AS paid");
  }

  private static String claimAndPayAll(String source) {
    return claimAndPay(source, "gate_all_won(count(p.order_no), cardinality($1::text[])) AS won");
  }

  /** The claiming statement, answering {@code answer} over the claimed keys ({@code c}) and the orders paid ({@code p}). */
  private static String claimAndPay(String source, String answer) {
    return """
      WITH noted AS (
          INSERT INTO payment_notifications AS n
              (channel, txn_id, order_no, amount_cents, gateway_status, notification_id, payload, deliveries)
          SELECT * FROM unnest($6::text[], $7::text[], $8::text[], $9::bigint[], $10::text[], $11::text[],
                               $12::text[], $13::int[])
          ON CONFLICT (channel, txn_id, gateway_status, order_no, amount_cents)
          DO UPDATE SET deliveries = n.deliveries + EXCLUDED.deliveries, last_at = now()),
      claimed AS (
          INSERT INTO payment_receipts (channel, txn_id, order_no, amount_cents, gateway_status, currency,
                                        outcome, order_status)
          SELECT r.*, 'APPLIED', 'PAID'
          FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $14::text[]) AS r
          ON CONFLICT (channel, txn_id) DO NOTHING
          RETURNING channel, txn_id, order_no, amount_cents, currency),
      x AS (
          SELECT c.order_no, c.channel, c.txn_id, c.amount_cents AS amount, c.currency
          FROM claimed c JOIN unnest($16::text[], $17::text[]) AS f(channel, txn_id)
            ON c.channel = f.channel AND c.txn_id = f.txn_id),
      """ + gateCtes(source, "$15") + """
      SELECT {answer}
      FROM claimed c LEFT JOIN paid p ON p.paid_channel = c.channel AND p.paid_txn_id = c.txn_id"""
        .replace("{answer}", answer);
  }

  /**
   * The one exit to PAID, per row conditional on the status and the amount, and in the same
   * statement the winners' side effects, driven only by the rows the UPDATE returned: the coupon
   * becomes USED, the transition is logged, ORDER_PAID and NOTIFY_SMS ({@code $5} the template)
   * go to the outbox. For the callbacks {@link #CLAIM_AND_PAY} claimed but did not put through the
   * gate in its own statement (an order's later SUCCESS in the same batch, or its first fresh one when
   * the batch's first was a duplicate; an order created after that statement's snapshot). Their
   * receipts already say APPLIED.
   */
  public static final String PAY_ORDERS = payOrders("PAYMENT_CALLBACK");

  /** The same gate for a payment found by querying the gateway (close before cancel, issue 10). */
  public static final String PAY_ORDERS_BY_QUERY = payOrders("PAYMENT_QUERY");

  private static String payOrders(String source) {
    return """
      WITH x AS (
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $6::text[])
            AS u(order_no, channel, txn_id, amount, currency)),
      """ + gateCtes(source, "$5") + """
      SELECT order_no FROM paid""";
  }

  /**
   * The gate's UPDATE over the candidates, a CTE {@code x} (order_no, channel, txn_id, amount, currency),
   * and its winners' side effects: the CTEs from {@code paid} to {@code events}, the last one. {@code
   * source} is written as a literal (closed_by and the transition's source); {@code template} is the SMS
   * template's parameter.
   */
  private static String gateCtes(String source, String template) {
    return """
      paid AS (
          UPDATE orders o SET status = 'PAID', paid_at = now(), paid_channel = x.channel, paid_txn_id = x.txn_id,
                              closed_by = '{source}'
          FROM x
          WHERE o.order_no = x.order_no AND o.status = 'PENDING_PAYMENT' AND o.amount_cents = x.amount
            AND (x.currency IS NULL OR o.currency = x.currency)
          RETURNING o.order_no, o.user_id, o.amount_cents, o.paid_at, o.paid_channel, o.paid_txn_id),
      used AS (
          UPDATE coupons c SET status = 'USED', updated_at = now()
          FROM paid WHERE c.order_no = paid.order_no AND c.status = 'LOCKED'),
      logged AS (
          INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
          SELECT order_no, 'PENDING_PAYMENT', 'PAID', '{source}', paid_channel, paid_txn_id FROM paid),
      events AS (
          INSERT INTO outbox_events (type, order_no, payload, status)
          SELECT e.type, p.order_no, e.payload, {written}
          FROM paid p
          CROSS JOIN LATERAL (VALUES
              (1, 'ORDER_PAID', jsonb_build_object(
                  'orderNo', p.order_no, 'userId', p.user_id, 'amountCents', p.amount_cents,
                  'paidAt', p.paid_at, 'channel', p.paid_channel, 'txnId', p.paid_txn_id,
                  'items', (SELECT jsonb_agg(jsonb_build_object('sku', i.sku, 'qty', i.qty,
                                                                'unitPriceCents', i.unit_price_cents) ORDER BY i.sku)
                              FROM order_items i WHERE i.order_no = p.order_no))),
              (2, 'NOTIFY_SMS', jsonb_build_object(
                  'template', {template}::text, 'userId', p.user_id, 'orderNo', p.order_no,
                  'params', jsonb_build_object('amountCents', p.amount_cents)))
          ) AS e(ord, type, payload)
          ORDER BY p.order_no, e.ord)
      """.replace("{source}", source).replace("{template}", template).replace("{written}", OutboxSql.WRITTEN_STATUS);
  }

  public static final String ORDER_STATES = """
      SELECT order_no, status, amount_cents, currency FROM orders WHERE order_no = ANY($1::text[])""";

  public static final String RECORD_OUTCOMES = """
      UPDATE payment_receipts r SET outcome = x.outcome, order_status = x.order_status
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x(channel, txn_id, outcome, order_status)
      WHERE r.channel = x.channel AND r.txn_id = x.txn_id""";

  public static final String FIRST_ANSWERS = """
      SELECT r.channel, r.txn_id, r.order_no, r.amount_cents, r.outcome, r.order_status
      FROM payment_receipts r
      JOIN unnest($1::text[], $2::text[]) AS x(channel, txn_id) ON r.channel = x.channel AND r.txn_id = x.txn_id""";

  // ---- admin --------------------------------------------------------------------------------

  /** Makes sure the SKU has a row; a new row starts at 0, which the ledger also sums to. */
  public static final String ENSURE_STOCK_ROW =
      "INSERT INTO inventory (sku, available) VALUES ($1, 0) ON CONFLICT (sku) DO NOTHING";

  /** Sets stock, returning the value it replaced (read under the row lock). */
  public static final String SET_STOCK = """
      UPDATE inventory n SET available = $2, updated_at = now()
      FROM (SELECT sku, available FROM inventory WHERE sku = $1 FOR UPDATE) AS old
      WHERE n.sku = old.sku
      RETURNING old.available""";

  public static final String LEDGER_SET = """
      INSERT INTO inventory_ledger (sku, delta, kind, actor) VALUES ($1, $2, 'SET', $3)""";

  public static final String SELECT_STOCK = "SELECT sku, available FROM inventory WHERE sku = $1";

  public static final String INSERT_COUPON = """
      INSERT INTO coupons (code, user_id, discount_cents, status) VALUES ($1, $2, $3, 'AVAILABLE')
      ON CONFLICT (code) DO NOTHING
      RETURNING code, status, order_no""";

  public static final String SELECT_COUPON = "SELECT code, user_id, discount_cents, status, order_no FROM coupons WHERE code = $1";

  // ---- verified notifications that are not payments ----------------------------------------

  /** Recorded once per (channel, notification id); a repeat returns no row. */
  public static final String RECORD_NOTIFICATION = """
      INSERT INTO channel_notifications (channel, notification_id, event_type, order_no, payload)
      VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (channel, notification_id) DO NOTHING
      RETURNING id""";
}
