package dev.ordergate.db;

/**
 * The reconciliation's invariants, one query each. Every query returns the violations only, in
 * the same three columns: {@code order_no} (null when the subject is not an order), {@code sku}
 * (null unless the subject is a SKU) and {@code detail} (what is wrong, for a human). They are read
 * only and run together in one REPEATABLE READ transaction, so they all see one snapshot.
 */
public final class ReconcileSql {

  private ReconcileSql() {
  }

  /** Every check runs in one snapshot and writes nothing. */
  public static final String SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY";

  /**
   * The checks read whole tables: the service's session-wide {@code statement_timeout} (sized for
   * the gate) does not apply inside the reconciliation's own read-only transaction.
   */
  public static final String NO_STATEMENT_TIMEOUT = "SET LOCAL statement_timeout = 0";

  /** Wraps a check so that it returns at most {@code $1} rows plus the total count. */
  public static String limited(String check) {
    return "SELECT v.order_no, v.sku, v.detail, count(*) OVER () AS total FROM (" + check
        + ") AS v ORDER BY v.order_no NULLS FIRST, v.sku NULLS FIRST LIMIT $1";
  }

  /** An order's status is the {@code to} of its last transition (an order without any is wrong too). */
  public static final String STATUS_IS_LAST_TRANSITION = """
      SELECT o.order_no, NULL::text AS sku,
             format('status is %s but the last transition goes to %s', o.status, coalesce(t.to_status, '(no transition)')) AS detail
      FROM orders o
      LEFT JOIN LATERAL (SELECT to_status FROM order_transitions x
                         WHERE x.order_no = o.order_no ORDER BY x.id DESC LIMIT 1) t ON true
      WHERE t.to_status IS DISTINCT FROM o.status""";

  /** At most one transition out of PENDING_PAYMENT per order (the gate's own statement of itself). */
  public static final String ONE_EXIT_FROM_PENDING = """
      SELECT order_no, NULL::text AS sku,
             format('%s transitions out of PENDING_PAYMENT (to %s)', count(*), string_agg(to_status || ' by ' || source, ', ' ORDER BY id)) AS detail
      FROM order_transitions
      WHERE from_status = 'PENDING_PAYMENT'
      GROUP BY order_no
      HAVING count(*) > 1""";

  /** Per SKU, {@code available} equals the ledger's running total. */
  public static final String STOCK_IS_LEDGER_TOTAL = """
      SELECT NULL::text AS order_no, coalesce(i.sku, l.sku) AS sku,
             format('available is %s but the ledger sums to %s', coalesce(i.available::text, '(no inventory row)'),
                    coalesce(l.total, 0)) AS detail
      FROM inventory i
      FULL JOIN (SELECT sku, sum(delta) AS total FROM inventory_ledger GROUP BY sku) l ON l.sku = i.sku
      WHERE i.available IS DISTINCT FROM coalesce(l.total, 0)""";

  /** Per (order, sku) ledger rows, shared by the two RETURN checks. */
  private static final String LEDGER_BY_ORDER = """
      WITH l AS (
        SELECT order_no, sku,
               count(*) FILTER (WHERE kind = 'RETURN') AS returns,
               coalesce(sum(delta) FILTER (WHERE kind = 'RETURN'), 0) AS returned,
               coalesce(-sum(delta) FILTER (WHERE kind = 'TAKE'), 0) AS taken
        FROM inventory_ledger WHERE order_no IS NOT NULL
        GROUP BY order_no, sku)
      """;

  /** A cancelled order has exactly one RETURN per item, equal to what it took (its quantity). */
  public static final String CANCELLED_RETURNED_ONCE = LEDGER_BY_ORDER + """
      SELECT o.order_no, i.sku,
             format('cancelled: item qty %s, took %s, returned %s in %s RETURN rows',
                    i.qty, coalesce(l.taken, 0), coalesce(l.returned, 0), coalesce(l.returns, 0)) AS detail
      FROM orders o
      JOIN order_items i ON i.order_no = o.order_no
      LEFT JOIN l ON l.order_no = i.order_no AND l.sku = i.sku
      WHERE o.status = 'CANCELLED'
        AND (coalesce(l.returns, 0) <> 1 OR coalesce(l.returned, 0) <> coalesce(l.taken, 0) OR coalesce(l.taken, 0) <> i.qty)""";

  /** Pending and paid orders returned nothing; no RETURN belongs to something the order did not hold. */
  public static final String OPEN_ORDERS_RETURNED_NOTHING = LEDGER_BY_ORDER + """
      SELECT l.order_no, l.sku,
             CASE WHEN o.order_no IS NULL THEN format('%s RETURN rows for an order that does not exist', l.returns)
                  WHEN i.sku IS NULL THEN format('%s RETURN rows for a sku the order does not hold', l.returns)
                  ELSE format('%s but has %s RETURN rows (%s units)', o.status, l.returns, l.returned) END AS detail
      FROM l
      LEFT JOIN orders o ON o.order_no = l.order_no
      LEFT JOIN order_items i ON i.order_no = l.order_no AND i.sku = l.sku
      WHERE l.returns > 0 AND (o.order_no IS NULL OR i.sku IS NULL OR o.status <> 'CANCELLED')""";

  /**
   * A coupon is USED iff its order is PAID, LOCKED iff its order is pending, otherwise AVAILABLE;
   * "its order" is the live (pending or paid) order that carries the code.
   */
  public static final String COUPON_FOLLOWS_ORDER = """
      SELECT coalesce(o.order_no, c.order_no) AS order_no, NULL::text AS sku,
             format('coupon %s is %s (order %s) but its live order is %s', c.code, c.status,
                    coalesce(c.order_no, '-'), coalesce(o.order_no || ' ' || o.status, 'none')) AS detail
      FROM coupons c
      LEFT JOIN orders o ON o.coupon_code = c.code AND o.status IN ('PENDING_PAYMENT', 'PAID')
      WHERE NOT ((o.order_no IS NULL AND c.status = 'AVAILABLE')
              OR (o.status = 'PAID' AND c.status = 'USED' AND c.order_no = o.order_no)
              OR (o.status = 'PENDING_PAYMENT' AND c.status = 'LOCKED' AND c.order_no = o.order_no))""";

  /**
   * Every SUCCESS receipt is either the one applied payment of a PAID order with the same amount,
   * or not applied and attached to an exception order with the same amount.
   */
  public static final String SUCCESS_RECEIPT_ACCOUNTED = """
      SELECT r.order_no, NULL::text AS sku,
             format('receipt %s/%s of %s cents (outcome %s) is %s', r.channel, r.txn_id, r.amount_cents,
                    coalesce(r.outcome, 'none'),
                    CASE WHEN r.outcome = 'APPLIED' AND e.id IS NOT NULL THEN 'applied and also an exception order'
                         WHEN r.outcome = 'APPLIED' THEN format('applied, but the order is %s paid by %s for %s cents',
                              coalesce(o.status, '(missing)'), coalesce(o.paid_txn_id, '-'), coalesce(o.amount_cents::text, '-'))
                         WHEN e.id IS NULL THEN 'neither applied nor in an exception order'
                         ELSE format('in exception order %s with %s cents', e.id, e.amount_cents) END) AS detail
      FROM payment_receipts r
      LEFT JOIN orders o ON o.order_no = r.order_no
      LEFT JOIN exception_orders e ON e.channel = r.channel AND e.txn_id = r.txn_id AND e.conflict_key = ''
      WHERE r.gateway_status = 'SUCCESS'
        AND NOT ((r.outcome = 'APPLIED' AND e.id IS NULL AND o.status = 'PAID' AND o.paid_channel = r.channel
                  AND o.paid_txn_id = r.txn_id AND o.amount_cents = r.amount_cents)
              OR (r.outcome IS DISTINCT FROM 'APPLIED' AND e.id IS NOT NULL AND e.amount_cents = r.amount_cents
                  AND e.order_no = r.order_no))""";

  /**
   * Every distinct SUCCESS content a gateway ever delivered is accounted for: the one its receipt
   * holds is the applied payment of a PAID order or in an exception order; one that differs from its
   * receipt (another order or amount) is in a CONFLICTING_DUPLICATE exception of its own.
   */
  public static final String SUCCESS_NOTIFICATION_ACCOUNTED = """
      SELECT n.order_no, NULL::text AS sku,
             format('SUCCESS notification %s/%s (order %s, %s cents, %s deliveries) is %s', n.channel, n.txn_id,
                    n.order_no, n.amount_cents, n.deliveries,
                    CASE WHEN r.id IS NULL THEN 'recorded but has no receipt'
                         WHEN r.order_no = n.order_no AND r.amount_cents = n.amount_cents
                              THEN 'neither the applied payment of a PAID order nor in an exception order'
                         ELSE format('unlike its receipt (order %s, %s cents) and in no conflict exception',
                                     r.order_no, r.amount_cents) END) AS detail
      FROM payment_notifications n
      LEFT JOIN payment_receipts r ON r.channel = n.channel AND r.txn_id = n.txn_id
      WHERE n.gateway_status = 'SUCCESS'
        AND NOT (r.id IS NOT NULL AND (
             (r.order_no = n.order_no AND r.amount_cents = n.amount_cents AND (
                  EXISTS (SELECT 1 FROM orders o WHERE o.order_no = r.order_no AND o.status = 'PAID'
                                                   AND o.paid_channel = n.channel AND o.paid_txn_id = n.txn_id)
               OR EXISTS (SELECT 1 FROM exception_orders e WHERE e.channel = n.channel AND e.txn_id = n.txn_id
                                                             AND e.conflict_key = '')))
          OR EXISTS (SELECT 1 FROM exception_orders e WHERE e.channel = n.channel AND e.txn_id = n.txn_id
                                                        AND e.conflict_key = n.order_no || '/' || n.amount_cents)))""";

  /** A PAID order has exactly one applied receipt; a CANCELLED (or pending) order has none. */
  public static final String PAID_HAS_ONE_APPLIED_RECEIPT = """
      SELECT o.order_no, NULL::text AS sku,
             format('%s with %s applied receipts', o.status, count(r.id)) AS detail
      FROM orders o
      LEFT JOIN payment_receipts r ON r.order_no = o.order_no AND r.outcome = 'APPLIED'
      GROUP BY o.order_no, o.status
      HAVING (o.status = 'PAID' AND count(r.id) <> 1) OR (o.status <> 'PAID' AND count(r.id) > 0)""";

  /** The outbox table (migration V3, exceptions and refunds); the refund check needs it. */
  public static final String REFUND_TABLE = "outbox_events";

  /**
   * An exception order in REFUNDED has a delivered refund request in the outbox, or (refunds through a
   * gateway, issue 10) a request whose refund the gateway itself confirmed: its refund notification or
   * query, which may come while the request waits for a retry or after it died.
   */
  public static final String REFUNDED_HAS_DELIVERED_REQUEST = """
      SELECT e.order_no, NULL::text AS sku,
             format('exception %s (%s, %s/%s, %s cents) is REFUNDED but its refund request is %s', e.id, e.kind,
                    e.channel, e.txn_id, e.amount_cents, coalesce(ob.status, 'missing')) AS detail
      FROM exception_orders e
      LEFT JOIN outbox_events ob ON ob.exception_id = e.id AND ob.type = 'REFUND_REQUESTED'
      WHERE e.status = 'REFUNDED' AND ob.status IS DISTINCT FROM 'DELIVERED'
        AND (ob.id IS NULL OR NOT EXISTS (
            SELECT 1 FROM exception_history h WHERE h.exception_id = e.id AND h.event = 'REFUND_CONFIRMED'
              AND h.actor LIKE '%""" + RefundSql.GATEWAY_WORD + "'))";

  /** Whether a table exists (the outbox arrives with another migration). */
  public static final String TABLE_EXISTS = "SELECT to_regclass($1) IS NOT NULL AS present";
}
