package dev.ordergate.reminder;

import dev.ordergate.db.OutboxSql;

/**
 * The reminder path's SQL, kept in this package so that {@code ReminderPackageTest} can read every
 * statement the path can run from its class files: none of them writes {@code orders}.
 * {@code 'PENDING_PAYMENT'} is a literal so the scan is served by the partial index
 * {@code orders_pending_expiry}.
 *
 * <p>Both statements send at most one reminder per order and only while it is pending and not yet
 * expired, decided in the statement itself: the order row is share-locked ({@code SKIP LOCKED}: a
 * payment or cancellation in flight is skipped, the next scan looks again), which re-checks the
 * status of a row changed since the snapshot and makes a payment that starts now wait for this
 * statement; the primary key of {@code payment_reminders} makes a second trigger (another instance,
 * a duplicate event) insert nothing, so it writes no event either.
 */
final class ReminderSql {

  private ReminderSql() {
  }

  private static final String SEND = """
      sent AS (
          INSERT INTO payment_reminders (order_no, trigger, instance_id, due_at)
          SELECT order_no, $3, $4, expires_at - make_interval(secs => $1) FROM due
          ON CONFLICT (order_no) DO NOTHING
          RETURNING order_no, due_at),
      events AS (
          INSERT INTO outbox_events (type, order_no, payload, status)
          SELECT 'NOTIFY_SMS', d.order_no, jsonb_build_object(
                     'template', $5::text, 'userId', d.user_id, 'orderNo', d.order_no,
                     'params', jsonb_build_object('amountCents', d.amount_cents, 'expiresAt', d.expires_at)),
                 {written}
          FROM due d JOIN sent s ON s.order_no = d.order_no
          ORDER BY d.order_no)
      SELECT order_no, greatest(0, extract(epoch FROM clock_timestamp() - due_at))::float8 AS lateness_seconds
      FROM sent""".replace("{written}", OutboxSql.WRITTEN_STATUS);

  /**
   * The scan: pending orders whose reminder is due ({@code $1} seconds before expiry) and not yet
   * sent, at most {@code $2}. {@code $3} trigger, {@code $4} instance, {@code $5} SMS template.
   */
  static final String SEND_DUE = """
      WITH due AS (
          SELECT o.order_no, o.user_id, o.amount_cents, o.expires_at FROM orders o
          WHERE o.status = 'PENDING_PAYMENT' AND o.expires_at > now()
            AND o.expires_at <= now() + make_interval(secs => $1)
            AND NOT EXISTS (SELECT 1 FROM payment_reminders r WHERE r.order_no = o.order_no)
          ORDER BY o.expires_at
          LIMIT $2
          FOR SHARE OF o SKIP LOCKED),
      """ + SEND;

  /** The same for named orders ({@code $2}, an expiry event's orders), if their reminder is due. */
  static final String SEND_FOR = """
      WITH due AS (
          SELECT o.order_no, o.user_id, o.amount_cents, o.expires_at FROM orders o
          WHERE o.order_no = ANY($2::text[]) AND o.status = 'PENDING_PAYMENT' AND o.expires_at > now()
            AND o.expires_at <= now() + make_interval(secs => $1)
            AND NOT EXISTS (SELECT 1 FROM payment_reminders r WHERE r.order_no = o.order_no)
          FOR SHARE OF o SKIP LOCKED),
      """ + SEND;
}
