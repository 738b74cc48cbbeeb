package dev.ordergate.db;

/**
 * Refunds through the gateways (issue 10): what the gateway's answer, its refund notification or a refund
 * query does to the refund's exception. Every move is conditional on the exception's current status, so
 * answers and notifications arriving in any order, and repeats, end in the same place.
 */
public final class RefundSql {

  private RefundSql() {
  }

  /**
   * How the history's actor of a move made on the gateway's own word ends (its refund answer, notification or
   * query; the detail says which): reconcile accepts such a confirmation in place of a delivered request.
   */
  public static final String GATEWAY_WORD = " (gateway confirmation)";

  /** The exception of refund request {@code $1} and its status (no row: no such refund request). */
  public static final String STATUS = """
      SELECT x.id, x.status FROM outbox_events e JOIN exception_orders x ON x.id = e.exception_id
      WHERE e.id = $1 AND e.type = 'REFUND_REQUESTED'""";

  /**
   * Moves the exception of channel {@code $1}'s refund request {@code $2} (null: the request of that channel's
   * txn {@code $3}, for a notification that names only the payment) to {@code $4} when its status is one of
   * {@code $5}, with history event {@code $6} by {@code $7}, detail {@code $8}. When it does not move and its
   * status is not {@code $4} already (a late or conflicting word: after a manual resolution, a failure after
   * a confirmation), a REFUND_NOTIFIED line keeps the gateway's word as proof. Answers the exception, its
   * status before and whether it moved; no row: no such refund request of that channel.
   */
  public static final String APPLY = """
      WITH ev AS (
          SELECT e.id, e.exception_id FROM outbox_events e JOIN exception_orders x ON x.id = e.exception_id
          WHERE e.type = 'REFUND_REQUESTED' AND x.channel = $1
            AND (e.id = $2::uuid OR ($2::uuid IS NULL AND x.txn_id = $3::text))
          ORDER BY e.seq LIMIT 1),
      old AS (
          SELECT x.id, x.status FROM exception_orders x JOIN ev ON x.id = ev.exception_id FOR UPDATE OF x),
      ex AS (
          UPDATE exception_orders x SET status = $4::text, updated_at = now()
          FROM old WHERE x.id = old.id AND old.status = ANY($5::text[])
          RETURNING x.id, old.status AS from_status),
      h AS (
          INSERT INTO exception_history (exception_id, event, from_status, to_status, actor, detail)
          SELECT id, $6::text, from_status, $4::text, $7::text, $8::text FROM ex
          UNION ALL
          SELECT id, 'REFUND_NOTIFIED', status, status, $7::text, $8::text FROM old
          WHERE NOT EXISTS (SELECT 1 FROM ex) AND old.status <> $4::text)
      SELECT old.id, old.status AS was, ev.id AS refund_id, (SELECT count(*) FROM ex) AS moved
      FROM ev JOIN old ON old.id = ev.exception_id""";

  /**
   * Up to {@code $2} refunds the gateway accepted and has not settled, not asked about for {@code $1}
   * seconds, oldest first; each one's {@code updated_at} is set now, so the next run asks the others first
   * (for a REFUND_PROCESSING exception, updated_at is when its gateway was last asked).
   */
  public static final String DUE_QUERIES = """
      WITH due AS (
          SELECT id FROM exception_orders
          WHERE status = 'REFUND_PROCESSING' AND updated_at <= now() - $1::float8 * interval '1 second'
          ORDER BY updated_at LIMIT $2
          FOR UPDATE SKIP LOCKED),
      touched AS (
          UPDATE exception_orders x SET updated_at = now() FROM due WHERE x.id = due.id RETURNING x.id)
      SELECT e.id, e.seq, e.type, e.order_no, e.payload::text AS payload, e.attempts, e.created_at, e.exception_id
      FROM touched JOIN outbox_events e ON e.exception_id = touched.id AND e.type = 'REFUND_REQUESTED'""";
}
