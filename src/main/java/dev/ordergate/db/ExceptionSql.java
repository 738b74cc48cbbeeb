package dev.ordergate.db;

/** The exception orders' SQL: opening with the refund tier, history, listing and resolution. */
public final class ExceptionSql {

  private ExceptionSql() {
  }

  /**
   * Opens the exceptions of one gate transaction in one statement: per row ({@code $1..$7}:
   * order, kind, channel, txn, amount, decided status, why, conflict key) the exception (idempotent by
   * channel + txn id + conflict key), its history (OPENED, then REFUND_REQUESTED or MANUAL_REVIEW) and, for an
   * automatic refund, the REFUND_REQUESTED outbox event. Rows that already existed do nothing.
   */
  public static final String OPEN_EXCEPTIONS = """
      WITH x AS (
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[],
                               $8::text[])
              AS x(order_no, kind, channel, txn_id, amount_cents, status, reason, conflict_key)),
      ins AS (
          INSERT INTO exception_orders (order_no, kind, channel, txn_id, amount_cents, status, conflict_key)
          SELECT order_no, kind, channel, txn_id, amount_cents, status, conflict_key FROM x
          ON CONFLICT (channel, txn_id, conflict_key) DO NOTHING
          RETURNING id, order_no, kind, channel, txn_id, amount_cents, status, conflict_key),
      ev AS (
          INSERT INTO outbox_events (type, order_no, payload, exception_id)
          SELECT 'REFUND_REQUESTED', ins.order_no,
                 jsonb_build_object('channel', ins.channel, 'txnId', ins.txn_id, 'orderNo', ins.order_no,
                                    'amountCents', ins.amount_cents, 'reason', ins.kind),
                 ins.id
          FROM ins WHERE ins.status = 'REFUND_PENDING'
          ORDER BY ins.id
          RETURNING exception_id),
      h AS (
          INSERT INTO exception_history (exception_id, event, from_status, to_status, actor, detail)
          SELECT ins.id, s.event, s.from_status, s.to_status, s.actor, s.detail
          FROM ins
          JOIN x ON x.channel = ins.channel AND x.txn_id = ins.txn_id AND x.conflict_key = ins.conflict_key
          CROSS JOIN LATERAL (VALUES
              (1, 'OPENED', NULL, 'OPEN', 'PAYMENT_CALLBACK',
               ins.kind || ': txn ' || ins.txn_id || ' on ' || ins.channel || ', ' || ins.amount_cents || ' cents'),
              (2, CASE ins.status WHEN 'REFUND_PENDING' THEN 'REFUND_REQUESTED' ELSE 'MANUAL_REVIEW' END,
               'OPEN', ins.status, 'refund-policy', x.reason)
          ) AS s(ord, event, from_status, to_status, actor, detail)
          ORDER BY ins.id, s.ord)
      SELECT ins.id, ins.order_no, ins.kind, ins.channel, ins.txn_id, ins.amount_cents, ins.status,
             (SELECT count(*) FROM ev) AS refunds
      FROM ins""";

  static final String COLUMNS = """
      id, order_no, kind, channel, txn_id, amount_cents, status, created_at, updated_at,
      resolution, resolved_by, resolution_note, resolved_at""";

  public static final String SELECT_EXCEPTION = "SELECT " + COLUMNS + " FROM exception_orders WHERE id = $1";

  public static final String SELECT_HISTORY = """
      SELECT event, from_status, to_status, actor, detail, at
      FROM exception_history WHERE exception_id = $1 ORDER BY id""";

  /**
   * The refund request event(s) of one exception, for its detail view. The type condition is
   * implied by a CHECK, and lets the partial index {@code outbox_one_refund} serve the lookup.
   */
  public static final String SELECT_REFUND_EVENTS = """
      SELECT id, status, attempts, last_error, delivered_at
      FROM outbox_events WHERE exception_id = $1 AND type = 'REFUND_REQUESTED' ORDER BY seq""";

  /**
   * Resolves an exception still awaiting a person (MANUAL_REVIEW or REFUND_FAILED; OPEN for
   * safety), reading the status it replaces under the row lock, and records who and why.
   */
  public static final String RESOLVE = """
      WITH old AS (
          SELECT id, status FROM exception_orders WHERE id = $1 FOR UPDATE),
      ex AS (
          UPDATE exception_orders x
          SET status = 'RESOLVED', resolution = $2, resolved_by = $3, resolution_note = $4,
              resolved_at = now(), updated_at = now()
          FROM old WHERE x.id = old.id AND old.status IN ('OPEN', 'MANUAL_REVIEW', 'REFUND_FAILED')
          RETURNING x.id, old.status AS from_status),
      h AS (
          INSERT INTO exception_history (exception_id, event, from_status, to_status, actor, detail)
          SELECT id, 'RESOLVED', from_status, 'RESOLVED', $3::text,
                 $2::text || coalesce(': ' || $4::text, '')
          FROM ex)
      SELECT ex.id, ex.from_status FROM ex""";

  public static final String STATUS = "SELECT status FROM exception_orders WHERE id = $1";

  /** After an operator retries a dead refund request: REFUND_FAILED -> REFUND_PENDING, with history. */
  public static final String RETRY_REFUND = """
      WITH ex AS (
          UPDATE exception_orders SET status = 'REFUND_PENDING', updated_at = now()
          WHERE id = $1 AND status = 'REFUND_FAILED'
          RETURNING id)
      INSERT INTO exception_history (exception_id, event, from_status, to_status, actor, detail)
      SELECT id, 'REFUND_RETRIED', 'REFUND_FAILED', 'REFUND_PENDING', $2::text, 'refund request ' || $3::text || ' retried'
      FROM ex
      RETURNING exception_id""";

  /** Unresolved exceptions by kind, for {@code ordergate_exceptions_open{kind}}. */
  public static final String OPEN_COUNTS = """
      SELECT kind, count(*) AS n, count(*) FILTER (WHERE status = 'REFUND_FAILED') AS refund_failed,
             EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest_s
      FROM exception_orders
      WHERE status IN ('OPEN', 'MANUAL_REVIEW', 'REFUND_PENDING', 'REFUND_PROCESSING', 'REFUND_FAILED')
      GROUP BY kind""";
}
