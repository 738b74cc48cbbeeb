package dev.ordergate.db;

/**
 * The operator console's SQL: sessions, the login throttle, the audit log, the overview's counters
 * and the order record. Lists page by key ({@code id < cursor}, newest first), never by offset.
 */
public final class ConsoleSql {

  private ConsoleSql() {
  }

  // ---- sessions -------------------------------------------------------------------------------

  /** {@code $1} token hash, {@code $2} operator, {@code $3} account tag, {@code $4} CSRF token, {@code $5} absolute seconds. */
  public static final String CREATE_SESSION = """
      INSERT INTO operator_sessions (token_hash, operator, account_tag, csrf_token, expires_at)
      VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 second')
      RETURNING expires_at""";

  /**
   * A live session ({@code $1} token hash, {@code $2} idle seconds), its idle clock restarted unless
   * {@code $3} is false (the overview's background polling does not keep a session alive).
   */
  public static final String TOUCH_SESSION = """
      UPDATE operator_sessions SET last_seen_at = CASE WHEN $3::boolean THEN now() ELSE last_seen_at END
      WHERE token_hash = $1 AND expires_at > now() AND last_seen_at > now() - $2::bigint * interval '1 second'
      RETURNING operator, account_tag, csrf_token, expires_at""";

  public static final String DELETE_SESSION = "DELETE FROM operator_sessions WHERE token_hash = $1";

  /** Ended sessions ({@code $1} idle seconds) and day-old failure counters. */
  public static final String PRUNE = """
      WITH s AS (DELETE FROM operator_sessions
                 WHERE expires_at <= now() OR last_seen_at <= now() - $1::bigint * interval '1 second')
      DELETE FROM operator_login_failures WHERE last_failed_at < now() - interval '1 day'""";

  // ---- login throttle -------------------------------------------------------------------------

  /**
   * Counts an attempt for {@code $1} as a failure before the password is checked (a success
   * clears it), under the row lock, so parallel guesses cannot all slip past the limit. Past
   * {@code $2} failures an attempt is only counted once the back-off (30 s * 2^(failures - $2), at
   * most {@code $3} s) since the last failure has passed; otherwise no row comes back.
   */
  public static final String RESERVE_ATTEMPT = """
      INSERT INTO operator_login_failures AS f (operator, failures) VALUES ($1, 1)
      ON CONFLICT (operator) DO UPDATE SET failures = f.failures + 1, last_failed_at = now()
      WHERE f.failures < $2 OR f.last_failed_at
          + least($3::float8, 30 * power(2::float8, f.failures - $2)) * interval '1 second' <= now()
      RETURNING failures""";

  /** Seconds until {@code $1} may try again. */
  public static final String RETRY_AFTER = """
      SELECT greatest(1, ceil(extract(epoch FROM last_failed_at
          + least($3::float8, 30 * power(2::float8, failures - $2)) * interval '1 second' - now())))::bigint AS seconds
      FROM operator_login_failures WHERE operator = $1""";

  public static final String CLEAR_FAILURES = "DELETE FROM operator_login_failures WHERE operator = $1";

  // ---- audit log ------------------------------------------------------------------------------

  /** Before the action: {@code $1} operator, {@code $2} via, {@code $3} action, {@code $4} target, {@code $5} detail, {@code $6} client. */
  public static final String AUDIT_BEGIN = """
      INSERT INTO audit_log (operator, via, action, target, detail, client) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id""";

  public static final String AUDIT_FINISH = """
      UPDATE audit_log SET result = $2, message = $3, finished_at = now() WHERE id = $1""";

  /** A finished entry in one statement (logins). */
  public static final String AUDIT_ENTRY = """
      INSERT INTO audit_log (operator, via, action, target, detail, result, message, client, finished_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())""";

  /** {@code $1} operator, {@code $2} action, {@code $3} result, {@code $4}/{@code $5} time range, {@code $6} cursor, {@code $7} limit. */
  public static final String AUDIT_PAGE = """
      SELECT id, at, operator, via, action, target, detail, result, message, client, finished_at FROM audit_log
      WHERE ($1::text IS NULL OR operator = $1) AND ($2::text IS NULL OR action = $2)
        AND ($3::text IS NULL OR result = $3)
        AND ($4::timestamptz IS NULL OR at >= $4) AND ($5::timestamptz IS NULL OR at < $5)
        AND ($6::bigint IS NULL OR id < $6)
      ORDER BY id DESC LIMIT $7""";

  // ---- the admin lists, by key ------------------------------------------------------------------

  /**
   * {@code $1} statuses or NULL, {@code $2} kind, {@code $3} channel, {@code $4}/{@code $5} created
   * range, {@code $6} order number, {@code $7} cursor (ids below it), {@code $8} limit.
   */
  public static final String EXCEPTION_PAGE = "SELECT " + ExceptionSql.COLUMNS + """

      FROM exception_orders
      WHERE ($1::text[] IS NULL OR status = ANY($1::text[])) AND ($2::text IS NULL OR kind = $2)
        AND ($3::text IS NULL OR channel = $3)
        AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)
        AND ($6::text IS NULL OR order_no = $6)
        AND ($7::bigint IS NULL OR id < $7)
      ORDER BY id DESC LIMIT $8""";

  private static final String EVENT_COLUMNS = """
      id, seq, type, order_no, payload, status, attempts, next_attempt_at, last_error, created_at,
      delivered_at, exception_id""";

  /** Lane DEAD's partial index serves it (V13). {@code $1} cursor, {@code $2} limit. */
  public static final String DEAD_EVENT_PAGE = "SELECT " + EVENT_COLUMNS + """

      FROM outbox_events WHERE lane = 'DEAD' AND ($1::bigint IS NULL OR seq < $1)
      ORDER BY seq DESC LIMIT $2""";

  /**
   * Pending events: the view {@code outbox_pending} (fresh ones from the recorded floor, and lane RETRY),
   * since no index names the status (V13). {@code $1} cursor, {@code $2} limit.
   */
  public static final String PENDING_EVENT_PAGE = "SELECT " + EVENT_COLUMNS + """

      FROM outbox_pending WHERE ($1::bigint IS NULL OR seq < $1)
      ORDER BY seq DESC LIMIT $2""";

  /**
   * DELIVERED walks the seq index from the newest, through {@code outbox_events_shown} (V18: a STREAM event at or
   * below the log sink's position is delivered). {@code $1} status, {@code $2} cursor, {@code $3} limit.
   */
  public static final String EVENT_PAGE = "SELECT " + EVENT_COLUMNS + """

      FROM outbox_events_shown WHERE status = $1 AND ($2::bigint IS NULL OR seq < $2)
      ORDER BY seq DESC LIMIT $3""";

  /**
   * Orders that a txn id ({@code $2}) touched on any of the channels {@code $1} (the unique
   * (channel, txn_id) indexes serve it), below the cursor {@code $3} (an order number), newest key first.
   */
  public static final String ORDERS_BY_TXN = """
      SELECT o.order_no, o.user_id, o.status, o.amount_cents, o.currency, o.coupon_code, o.created_at, o.expires_at,
             o.paid_at, o.cancelled_at, o.paid_txn_id, o.closed_by,
             (SELECT json_agg(json_build_object('sku', i.sku, 'qty', i.qty, 'unitPriceCents', i.unit_price_cents)
                              ORDER BY i.sku)
                FROM order_items i WHERE i.order_no = o.order_no) AS items
      FROM orders o
      WHERE o.order_no IN (SELECT order_no FROM payment_receipts WHERE channel = ANY($1::text[]) AND txn_id = $2
                           UNION SELECT order_no FROM exception_orders WHERE channel = ANY($1::text[]) AND txn_id = $2)
        AND ($3::text IS NULL OR o.order_no < $3)
      ORDER BY o.order_no DESC LIMIT $4""";

  /** The attempts of the events {@code $1} (ids), oldest first (written by the V8_1 trigger). */
  public static final String EVENT_ATTEMPTS = """
      SELECT event_id, attempt, relay, outcome, error, at FROM outbox_attempts
      WHERE event_id = ANY($1::uuid[]) ORDER BY event_id, id""";

  // ---- the order record -------------------------------------------------------------------------

  public static final String ORDER_COUPON = """
      SELECT code, user_id, discount_cents, status, order_no, updated_at FROM coupons WHERE code = $1""";

  public static final String ORDER_RECEIPTS = """
      SELECT channel, txn_id, amount_cents, gateway_status, outcome, order_status, received_at
      FROM payment_receipts WHERE order_no = $1 ORDER BY id""";

  /** The receipt of an exception's (channel, txn id). */
  public static final String EXCEPTION_RECEIPT = """
      SELECT channel, txn_id, amount_cents, gateway_status, outcome, order_status, received_at
      FROM payment_receipts WHERE channel = $1 AND txn_id = $2""";

  private static final String NOTIFICATION_COLUMNS = """
      channel, txn_id, order_no, amount_cents, gateway_status, notification_id, payload, deliveries, first_at, last_at""";

  /** The verified deliveries of one (channel, txn id), oldest first: an exception's gateway payloads. */
  public static final String TXN_NOTIFICATIONS = "SELECT " + NOTIFICATION_COLUMNS
      + " FROM payment_notifications WHERE channel = $1 AND txn_id = $2 ORDER BY id";

  /**
   * The verified deliveries of the txns an order's receipts and exceptions name (by their unique
   * (channel, txn) keys; payment_notifications has no order index, the write path stays as it is).
   */
  public static final String ORDER_NOTIFICATIONS = "SELECT " + NOTIFICATION_COLUMNS + """

      FROM payment_notifications
      WHERE (channel, txn_id) IN (SELECT channel, txn_id FROM payment_receipts WHERE order_no = $1
                                  UNION SELECT channel, txn_id FROM exception_orders WHERE order_no = $1)
      ORDER BY id""";

  public static final String ORDER_EXCEPTIONS = "SELECT " + ExceptionSql.COLUMNS
      + " FROM exception_orders WHERE order_no = $1 ORDER BY id";

  // ---- the overview ---------------------------------------------------------------------------------

  /** {@code $1} the sweep's grace seconds. "Today" is the database's day (UTC unless configured otherwise). */
  public static final String SUMMARY = """
      SELECT (SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT') AS pending,
             (SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT'
                AND expires_at <= now() - make_interval(secs => $1)) AS overdue,
             (SELECT count(*) FROM exception_orders WHERE status IN ('OPEN', 'MANUAL_REVIEW')) AS manual_review,
             (SELECT count(*) FROM exception_orders WHERE status = 'REFUND_PENDING') AS refunds_pending,
             (SELECT count(*) FROM exception_orders WHERE status = 'REFUND_PROCESSING') AS refunds_processing,
             (SELECT count(*) FROM exception_orders WHERE status = 'REFUND_FAILED') AS refunds_failed,
             (SELECT count(*) FROM outbox_pending) AS outbox_pending,
             (SELECT count(*) FROM outbox_events WHERE lane = 'DEAD') AS outbox_dead,
             (SELECT coalesce(json_object_agg(kind, n), '{}'::json) FROM (
                 SELECT kind, count(*) AS n FROM exception_orders
                 WHERE created_at >= date_trunc('day', now()) GROUP BY kind) k) AS today_by_kind,
             date_trunc('day', now()) AS day_start""";
}
