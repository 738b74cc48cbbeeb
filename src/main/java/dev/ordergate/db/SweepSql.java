package dev.ordergate.db;

/**
 * The timeout sweep's SQL. {@code 'PENDING_PAYMENT'} is a literal in every statement that must be
 * served by the partial index {@code orders_pending_expiry}; times are the database's clock.
 */
public final class SweepSql {

  private SweepSql() {
  }

  /**
   * The claim: due orders, oldest expiry first, locked for this batch's transaction. A row that
   * another transaction holds (a payment in flight, another sweeper) is skipped, not waited for.
   * An order with an OPEN payment attempt waits for the close pass (close before cancel, issue 10).
   * {@code $1} grace seconds, {@code $2} batch size.
   */
  public static final String CLAIM_DUE = """
      SELECT order_no FROM orders
      WHERE status = 'PENDING_PAYMENT' AND expires_at <= now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM payment_attempts a WHERE a.order_no = orders.order_no AND a.state = 'OPEN')
      ORDER BY expires_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED""";

  /**
   * A batch's claim and its gate in one statement: {@link #CLAIM_DUE} ({@code $1} grace seconds,
   * {@code $2} batch size), then one conditional set-based UPDATE of the claimed rows. Answers a row per
   * cancelled order (its lateness), each with the number claimed; one row with a null order number
   * when none of the claimed orders was cancelled, or none was due.
   */
  public static final String CLAIM_AND_CANCEL = """
      WITH due AS (
      """ + CLAIM_DUE + """
      ),
      won AS (
          UPDATE orders o SET status = 'CANCELLED', cancelled_at = now(), closed_by = 'TIMEOUT_SWEEP'
          FROM due
          WHERE o.order_no = due.order_no AND o.status = 'PENDING_PAYMENT'
          RETURNING o.order_no, extract(epoch FROM o.cancelled_at - o.expires_at)::float8 AS lateness_seconds)
      SELECT c.claimed, won.order_no, won.lateness_seconds
      FROM (SELECT count(*) AS claimed FROM due) c LEFT JOIN won ON true""";

  /**
   * After a run: how many pending orders are overdue (past expiry + grace, {@code $1} seconds), and
   * the earliest pending expiry, with the database's clock so the caller can correct for skew.
   */
  public static final String PLAN = """
      SELECT (SELECT count(*) FROM orders
               WHERE status = 'PENDING_PAYMENT' AND expires_at <= now() - make_interval(secs => $1)) AS overdue,
             (SELECT (extract(epoch FROM min(expires_at)) * 1000)::bigint FROM orders
               WHERE status = 'PENDING_PAYMENT') AS next_expiry_ms,
             (extract(epoch FROM now()) * 1000)::bigint AS db_now_ms""";

  // ---- run log ------------------------------------------------------------------------------

  private static final String RUN_COLUMNS =
      "id, instance_id, started_at, finished_at, batches, claimed, cancelled, error";

  public static final String START_RUN =
      "INSERT INTO sweep_runs (instance_id) VALUES ($1) RETURNING " + RUN_COLUMNS;

  public static final String FINISH_RUN = """
      UPDATE sweep_runs SET finished_at = now(), batches = $2, claimed = $3, cancelled = $4, error = $5
      WHERE id = $1
      RETURNING\s""" + RUN_COLUMNS;

  /** Newest first, ids below {@code $1} (NULL: from the newest), {@code $2} rows. */
  public static final String LIST_RUNS = "SELECT " + RUN_COLUMNS
      + " FROM sweep_runs WHERE ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2";

  public static final String PRUNE_RUNS =
      "DELETE FROM sweep_runs WHERE started_at < now() - make_interval(days => $1)";
}
