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
   * {@code $1} grace seconds, {@code $2} batch size.
   */
  public static final String CLAIM_DUE = """
      SELECT order_no FROM orders
      WHERE status = 'PENDING_PAYMENT' AND expires_at <= now() - make_interval(secs => $1)
      ORDER BY expires_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED""";

  /** The gate for the claimed orders: one conditional set-based UPDATE; side effects follow for the rows it returns. */
  public static final String CANCEL_CLAIMED = """
      UPDATE orders SET status = 'CANCELLED', cancelled_at = now(), closed_by = 'TIMEOUT_SWEEP'
      WHERE order_no = ANY($1::text[]) AND status = 'PENDING_PAYMENT'
      RETURNING order_no, extract(epoch FROM cancelled_at - expires_at)::float8 AS lateness_seconds""";

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
