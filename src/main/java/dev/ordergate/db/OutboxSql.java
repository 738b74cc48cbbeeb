package dev.ordergate.db;

/**
 * The outbox's SQL: the events the winning transitions write, the relay's claim and marks, and the
 * admin reads. {@code 'PENDING'} stays a literal where the partial indexes on pending events must
 * serve the statement.
 */
public final class OutboxSql {

  private OutboxSql() {
  }

  // ---- written by the winners, in the gate's transaction ------------------------------------

  /**
   * ORDER_CANCELLED then NOTIFY_SMS for each cancelled order ({@code $1}), in that order;
   * {@code $2} is the transition source, {@code $3} the SMS template key.
   */
  public static final String INSERT_CANCELLED_EVENTS = """
      INSERT INTO outbox_events (type, order_no, payload)
      SELECT e.type, o.order_no, e.payload
      FROM orders o
      CROSS JOIN LATERAL (VALUES
          (1, 'ORDER_CANCELLED', jsonb_build_object(
              'orderNo', o.order_no, 'userId', o.user_id, 'amountCents', o.amount_cents,
              'cancelledAt', o.cancelled_at, 'source', $2::text,
              'items', (SELECT jsonb_agg(jsonb_build_object('sku', i.sku, 'qty', i.qty) ORDER BY i.sku)
                          FROM order_items i WHERE i.order_no = o.order_no))),
          (2, 'NOTIFY_SMS', jsonb_build_object(
              'template', $3::text, 'userId', o.user_id, 'orderNo', o.order_no,
              'params', jsonb_build_object('amountCents', o.amount_cents)))
      ) AS e(ord, type, payload)
      WHERE o.order_no = ANY($1::text[])
      ORDER BY o.order_no, e.ord""";

  // ---- the relay ------------------------------------------------------------------------------

  /**
   * Claims up to {@code $1} due events for {@code $2} ms under claim token {@code $4} (relay
   * {@code $3}). An event waits while an earlier event of its order is still pending (in flight
   * included), so one order's events leave in order; locked rows are skipped, not waited for. An
   * event that used its {@code $5} attempts is never claimed again ({@link #EXHAUST} ends it).
   */
  public static final String CLAIM = """
      WITH due AS (
          SELECT e.id FROM outbox_events e
          WHERE e.status = 'PENDING' AND e.next_attempt_at <= now()
            AND (e.claimed_until IS NULL OR e.claimed_until <= now()) AND e.attempts < $5
            AND NOT EXISTS (SELECT 1 FROM outbox_events p
                            WHERE p.order_no = e.order_no AND p.status = 'PENDING' AND p.seq < e.seq)
          ORDER BY e.next_attempt_at, e.seq
          LIMIT $1
          FOR UPDATE OF e SKIP LOCKED)
      UPDATE outbox_events o
      SET attempts = o.attempts + 1, claim_token = $4, claimed_by = $3,
          claimed_until = now() + $2::bigint * interval '1 millisecond'
      FROM due WHERE o.id = due.id
      RETURNING o.id, o.seq, o.type, o.order_no, o.payload, o.attempts, o.created_at, o.exception_id""";

  /**
   * Marks deliveries ({@code $1} ids, {@code $2} their claim tokens), each only under the claim
   * that made it (a relay whose lease ran out marks nothing). A delivered refund request confirms its exception: REFUND_PENDING -> REFUNDED, with
   * history, in the same statement. {@code $3} is the relay.
   */
  public static final String MARK_DELIVERED = """
      WITH ev AS (
          UPDATE outbox_events o
          SET status = 'DELIVERED', delivered_at = now(), claim_token = NULL, claimed_until = NULL, last_error = NULL
          FROM unnest($1::uuid[], $2::uuid[]) AS x(id, token)
          WHERE o.id = x.id AND o.claim_token = x.token AND o.status = 'PENDING'
          RETURNING o.id, o.exception_id, o.attempts),
      ex AS (
          UPDATE exception_orders x SET status = 'REFUNDED', updated_at = now()
          FROM ev WHERE x.id = ev.exception_id AND x.status = 'REFUND_PENDING'
          RETURNING x.id, ev.attempts),
      h AS (
          INSERT INTO exception_history (exception_id, event, from_status, to_status, actor, detail)
          SELECT id, 'REFUND_CONFIRMED', 'REFUND_PENDING', 'REFUNDED', $3::text, 'refund confirmed (2xx) after ' || attempts || ' attempt(s)'
          FROM ex)
      SELECT id FROM ev""";

  /**
   * A failed attempt: back off exponentially ({@code $5} * 2^(attempts-1), at most {@code $6} ms),
   * or DEAD once {@code $4} attempts are used. A dead refund request fails its exception:
   * REFUND_PENDING -> REFUND_FAILED, with history. {@code $3} is the error, {@code $7} the relay.
   */
  public static final String MARK_FAILED = """
      WITH ev AS (
          UPDATE outbox_events
          SET status = CASE WHEN attempts >= $4 THEN 'DEAD' ELSE 'PENDING' END,
              next_attempt_at = CASE WHEN attempts >= $4 THEN next_attempt_at
                  ELSE now() + least($6::float8, $5::float8 * power(2::float8, attempts - 1)) * interval '1 millisecond' END,
              claim_token = NULL, claimed_until = NULL, last_error = $3::text
          WHERE id = $1 AND claim_token = $2 AND status = 'PENDING'
          RETURNING id, status, exception_id, attempts, next_attempt_at),
      """ + refundFailed("$7", "$3::text") + """

      SELECT status, attempts, greatest(0, ceil(extract(epoch FROM next_attempt_at - now()) * 1000))::bigint AS retry_in_ms
      FROM ev""";

  /**
   * The CTEs after {@code ev} (events just updated, with their status) that fail the exceptions of the
   * refund requests among them that went DEAD: REFUND_PENDING -> REFUND_FAILED, with history by relay
   * {@code relayParam}, the detail ending in {@code why}.
   */
  private static String refundFailed(String relayParam, String why) {
    return """
        ex AS (
            UPDATE exception_orders x SET status = 'REFUND_FAILED', updated_at = now()
            FROM ev WHERE ev.status = 'DEAD' AND x.id = ev.exception_id AND x.status = 'REFUND_PENDING'
            RETURNING x.id, ev.attempts),
        h AS (
            INSERT INTO exception_history (exception_id, event, from_status, to_status, actor, detail)
            SELECT id, 'REFUND_FAILED', 'REFUND_PENDING', 'REFUND_FAILED', %s::text,
                   'gave up after ' || attempts || ' attempt(s): ' || %s
            FROM ex)""".formatted(relayParam, why);
  }

  /**
   * Events whose last allowed attempt ({@code $1}) was claimed and never marked (the relay died or
   * lost its lease mid-delivery) go DEAD once that lease ran out, like any exhausted event; a dead
   * refund request fails its exception. {@code $2} is the relay.
   */
  public static final String EXHAUST = """
      WITH ev AS (
          UPDATE outbox_events
          SET status = 'DEAD', claim_token = NULL, claimed_until = NULL,
              last_error = coalesce(last_error, 'the last attempt was never answered within its lease')
          WHERE status = 'PENDING' AND attempts >= $1 AND claimed_until <= now()
          RETURNING id, status, exception_id, attempts),
      """ + refundFailed("$2", "'the last attempt was never answered within its lease'") + """

      SELECT count(*) AS n FROM ev""";

  public static final String COUNT_PENDING = "SELECT count(*) FROM outbox_events WHERE status = 'PENDING'";

  // ---- admin ----------------------------------------------------------------------------------

  /**
   * Newest events of a status. DEAD, the list an operator reads, has its own partial index
   * ({@code outbox_dead}) and so its own statement with the status as a literal; the others walk
   * the {@code seq} index from the newest.
   */
  public static final String SELECT_DEAD_EVENTS = """
      SELECT id, seq, type, order_no, payload, status, attempts, next_attempt_at, last_error, created_at,
             delivered_at, exception_id
      FROM outbox_events WHERE status = 'DEAD' ORDER BY seq DESC LIMIT $1""";

  public static final String SELECT_EVENTS = """
      SELECT id, seq, type, order_no, payload, status, attempts, next_attempt_at, last_error, created_at,
             delivered_at, exception_id
      FROM outbox_events WHERE status = $1 ORDER BY seq DESC LIMIT $2""";

  public static final String SELECT_EVENT = """
      SELECT id, seq, type, order_no, payload, status, attempts, next_attempt_at, last_error, created_at,
             delivered_at, exception_id
      FROM outbox_events WHERE id = $1""";

  /** A dead event goes back to pending with fresh attempts; anything else is left alone. */
  public static final String RETRY_DEAD = """
      UPDATE outbox_events
      SET status = 'PENDING', attempts = 0, next_attempt_at = now(), last_error = NULL,
          claim_token = NULL, claimed_until = NULL
      WHERE id = $1 AND status = 'DEAD'
      RETURNING id, seq, type, order_no, payload, status, attempts, next_attempt_at, last_error, created_at,
                delivered_at, exception_id""";
}
