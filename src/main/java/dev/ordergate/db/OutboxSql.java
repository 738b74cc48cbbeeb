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

  /** The session setting that makes the writers below write STREAM events (V18): see {@link #WRITTEN_STATUS}. */
  public static final String STREAM_SETTING = "ordergate.outbox_stream";

  /**
   * The status an ORDER_PAID, ORDER_CANCELLED or NOTIFY_SMS event is written with: STREAM when the writing
   * session has {@link #STREAM_SETTING} on (a service whose every sink type goes to the log sets it at connect),
   * so the relay delivers it by its cursor ({@link #STREAM_READ}) and never updates it; PENDING otherwise (a
   * webhook sink, or a writer that does not say: the claim and mark path, as before). Decided when the event is
   * written, so a relay of either kind delivers what is there.
   */
  public static final String WRITTEN_STATUS =
      "CASE WHEN current_setting('" + STREAM_SETTING + "', true) = 'on' THEN 'STREAM' ELSE 'PENDING' END";

  /**
   * ORDER_CANCELLED then NOTIFY_SMS for each cancelled order ({@code $1}), in that order;
   * {@code $2} is the transition source, {@code $3} the SMS template key. The main statement of
   * {@link Sql#CANCELLATION_EFFECTS}, after the CTEs of the other side effects.
   */
  public static final String INSERT_CANCELLED_EVENTS = """
      INSERT INTO outbox_events (type, order_no, payload, status)
      SELECT e.type, o.order_no, e.payload, """ + WRITTEN_STATUS + """

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

  /**
   * The broker tier's timeout messages for new orders ({@code $1}, text[]), in their creation
   * transaction: the relay hands them to the broker publisher after commit. Their outbox key is
   * {@code <orderNo>#timeout}, not the order number, so the relay's per-order chains never put one
   * in front of the order's other events: a broker that is down holds up no ORDER_PAID or
   * ORDER_CANCELLED. The payload carries the order number.
   */
  public static final String INSERT_TIMEOUT_EVENTS = """
      INSERT INTO outbox_events (type, order_no, payload)
      SELECT 'ORDER_TIMEOUT', order_no || '#timeout', jsonb_build_object(
                 'orderNo', order_no, 'expiresAt', expires_at,
                 'expiresAtMs', (extract(epoch FROM expires_at) * 1000)::bigint)
      FROM orders WHERE order_no = ANY($1::text[])
      ORDER BY order_no""";

  // ---- the relay ------------------------------------------------------------------------------

  /**
   * What the walking statements answer on each row besides the event, for the relay's frontier: whether it
   * is a head found by the fresh walk, its xid, and the statement snapshot's xmin (see OutboxRelay).
   */
  private static final String WALKED = "fresh_head, o.tx, pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin";

  /**
   * The {@code heads} CTE of {@link #CLAIM} and the log sink's statement: up to {@code $1} due events, each
   * the earliest pending event of its order, that match {@code condition}, locked with SKIP LOCKED. Two
   * walks, neither through the status (no index names it, so a delivery's update is HOT; V13): the
   * events waiting for a retry along {@code outbox_retry}, then the fresh ones along
   * {@code outbox_unstreamed_tx} (V19: no STREAM event in it) from the relay's floor {@code floorParam} (an xid
   * below which no fresh event is pending: see OutboxRelay). "Earliest of its order" is a LATERAL probe of {@code outbox_order} (an order has a
   * handful of events), always a parameterised index condition: as a NOT EXISTS anti-join, a plan cached
   * while the table was small scanned a whole index once per candidate (10.6 s for one batch; issue 13).
   * The fresh walk goes in xid order, not seq order: the probe keeps each order's events in seq order.
   */
  private static String heads(String condition, String floorParam) {
    String walk = """
        SELECT e.id, e.order_no, e.seq, e.tx, %s AS fresh FROM outbox_events e
            CROSS JOIN LATERAL (SELECT p.seq FROM outbox_events p
                                WHERE p.order_no = e.order_no AND p.status = 'PENDING'
                                ORDER BY p.seq LIMIT 1) first
            WHERE %s AND e.status = 'PENDING' AND %s AND e.next_attempt_at <= now()
              AND (e.claimed_until IS NULL OR e.claimed_until <= now())
              AND first.seq = e.seq
            ORDER BY %s
            LIMIT $1
            FOR UPDATE OF e SKIP LOCKED""";
    return "retried AS (\n    " + walk.formatted("false", "e.lane = 'RETRY'", condition, "e.seq") + "),\n"
        + "fresh AS (\n    " + walk.formatted("true", "e.tx >= " + floorParam + " AND e.lane IS NULL", condition, "e.tx, e.seq")
        + "),\nheads AS (\n    SELECT * FROM (SELECT * FROM retried UNION ALL SELECT * FROM fresh) h LIMIT $1)";
  }

  /**
   * Claims up to {@code $1} orders' due events for {@code $2} ms under claim token {@code $4} (relay
   * {@code $3}): each order's head (its earliest pending event, due and not under a lease) and, behind
   * it, the rest of that order's pending events, which the relay delivers one after the other. Heads
   * are locked with {@code SKIP LOCKED}, so two relays never take one order; an event behind a pending
   * head is never claimed by anyone else, so its order holds. The walks ({@link #heads}) go along an
   * index from the relay's floor {@code $7} and stop after LIMIT heads, whatever the statistics say.
   * An event that used its {@code $5} attempts is never claimed again ({@link #EXHAUST} ends it).
   * {@code $6}: at most this many events per order in one claim. A head's attempt is counted by the
   * claim (a relay that dies delivering it has used it); an event behind it only when its delivery is
   * marked (it may be given back unattempted).
   * {@code $8} false: no head of a type in {@code $9} (the log sink's types) is taken. The relay passes false
   * while its log-sink statement keeps up (its last batch was not full): a log event committed after that
   * statement's snapshot is then left to the next one (one row version) instead of going the claim, lease
   * and mark way (three, and two more statements; issue 13 measured a fifth of all log events on that path).
   * Behind a head, events of any type still follow it in its chain.
   */
  public static final String CLAIM = """
      WITH\s""" + heads("e.attempts < $5 AND ($8 OR e.type <> ALL($9::text[]))", "$7") + """

      , claimed AS (
          SELECT h.id, 1 AS counted, h.fresh AS fresh_head FROM heads h
          UNION ALL
          SELECT f.id, 0, false FROM heads h
          CROSS JOIN LATERAL (SELECT x.id FROM outbox_events x
                              WHERE x.order_no = h.order_no AND x.status = 'PENDING' AND x.seq > h.seq
                                AND x.attempts < $5
                              ORDER BY x.seq LIMIT $6 - 1) f)
      UPDATE outbox_events o
      SET attempts = o.attempts + claimed.counted, claim_token = $4, claimed_by = $3,
          claimed_until = now() + $2::bigint * interval '1 millisecond'
      FROM claimed WHERE o.id = claimed.id
      RETURNING o.id, o.seq, o.type, o.order_no, o.payload::text AS payload, o.attempts, o.created_at, o.exception_id,
                claimed.counted,
                """ + WALKED;

  /**
   * The log sink's delivery in one statement, for events whose type goes to the log ({@code $3}): up
   * to {@code $1} orders' heads and the log-sink events right behind them (no earlier pending event of
   * another type) become DELIVERED at once; the relay writes their log lines before the transaction
   * commits, so a crash in between logs them again (at least once), and no lease, claim row version or
   * second statement is spent. {@code $2} caps the events per order; {@code $4} is the relay; the fresh
   * walk starts at the relay's floor {@code $5} (an xid: see {@link #FLOOR}). Several
   * of these may run at once (one relay's lanes, or several relays): heads are locked with SKIP LOCKED,
   * and an event behind a head another statement holds is never a head itself. Their delivery time is one
   * {@code clock_timestamp()} taken in the statement, after its snapshot: never before an event's creation, as
   * {@code now()}, the transaction's start, could be ({@link #STREAM_ADVANCE}).
   */
  public static final String DELIVER_TO_LOG = deliverToLog(
      "o.id, o.seq, o.type, o.order_no, o.payload::text AS payload, o.attempts, o.created_at, o.exception_id");

  /**
   * {@link #DELIVER_TO_LOG} answering only each event's type and order, for when the sink's logger is
   * off: no payload is sent back, decoded and dropped (issue 13: a third of the relay's time).
   */
  public static final String DELIVER_TO_LOG_QUIET = deliverToLog("o.type, o.order_no");

  private static String deliverToLog(String returning) {
    return """
        WITH\s""" + heads("e.type = ANY($3::text[])", "$5") + """

        , delivered AS (
            SELECT h.id, h.fresh AS fresh_head FROM heads h
            UNION ALL
            SELECT f.id, false FROM heads h
            CROSS JOIN LATERAL (SELECT x.id FROM outbox_events x
                                WHERE x.order_no = h.order_no AND x.status = 'PENDING' AND x.seq > h.seq
                                  AND x.type = ANY($3::text[])
                                  AND NOT EXISTS (SELECT 1 FROM outbox_events q
                                                  WHERE q.order_no = h.order_no AND q.status = 'PENDING'
                                                    AND q.seq > h.seq AND q.seq < x.seq AND q.type <> ALL($3::text[]))
                                ORDER BY x.seq LIMIT $2 - 1) f)
        UPDATE outbox_events o
        SET status = 'DELIVERED', delivered_at = (SELECT clock_timestamp()), attempts = o.attempts + 1,
            claimed_by = $4, claim_token = NULL, claimed_until = NULL, last_error = NULL
        FROM delivered WHERE o.id = delivered.id
        RETURNING\s""" + returning + ", " + WALKED;
  }

  /**
   * The log sink's cursor (V18), first statement of its transaction: locks the position (SKIP LOCKED: while
   * another relay logs a batch, this one reads nothing; nor while another relay's lease on it has not run out,
   * V20) and reads up to {@code $1} STREAM events past it in
   * {@code (tx, seq)} order, only of transactions below the statement snapshot's xmin: all of them have ended,
   * so nothing can commit behind the position later. {@code returning} are the event's columns.
   * <p>{@code (tx, seq)} order is not always an order's order: a transaction that took its xid early and wrote an
   * event of an order after another transaction committed one of the same order comes first by xid (the
   * reminder's NOTIFY_SMS beside the exit's events). So each row answers the highest xid {@code wait_tx} and
   * seq {@code wait_seq} of its order's STREAM events with a lower seq and a higher xid: the relay delivers a
   * row only in a batch that reaches past those ({@code OutboxRelay}), and delivers each batch in seq order.
   * Aggregates, not ORDER BY ... LIMIT 1: with sorts off ({@link #CLAIM_PLAN}) that would walk a (tx, seq)
   * index backwards for an order number instead of probing {@code outbox_order}.
   * <p>The probe leaves the planner one way: its order number along {@code outbox_order}, whatever the
   * statistics say. It names the status, not the lane (the same rows: V18's lane is STREAM exactly when the
   * status is), so the partial index {@code outbox_stream_tx} cannot serve it, and its xid and seq only as
   * expressions ({@code + 0}), so neither a (tx, seq) index, nor the seq's index, nor a max() read backwards
   * along one of them can. Naming the lane, a table autovacuum had not analyzed yet (an order number's default
   * selectivity is 1/200 of the table) made the planner walk {@code outbox_stream_tx} from each event's xid to
   * the end of the backlog: a batch of 800 took 1.3 to 1.9 s against about 5 ms, and the bench's relay fell
   * 400,000 events behind in a minute (issue 13). Naming the status alone, statistics taken when the outbox held
   * one order's events made it read max() backwards along {@code outbox_tx}, V13's index of every event's
   * (tx, seq) (OutboxPathsTest; V19 replaced it by one without STREAM events).
   * <p>The same probe answers {@code behind}: an earlier event of the order (of a sink type) is PENDING on the
   * claim path, a retry of an event whose POST failed or one written without the stream setting. Such an event
   * is not delivered by the cursor but leaves it for the claim path ({@link #STREAM_DEMOTE}), which delivers it
   * after that one.
   */
  private static String streamRead(String returning) {
    return """
        WITH c AS (
            SELECT s.tx, s.seq, pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin
            FROM outbox_stream s WHERE s.id = 1 AND (s.lease_until IS NULL OR s.lease_until <= now())
            FOR UPDATE SKIP LOCKED)
        SELECT\s""" + returning + """
        , o.tx, o.seq, w.wait_tx, w.wait_seq, w.behind, c.xmin
        FROM c
        CROSS JOIN LATERAL (SELECT * FROM outbox_events e
                            WHERE (e.tx, e.seq) > (c.tx, c.seq) AND e.tx < c.xmin AND e.lane = 'STREAM'
                            ORDER BY e.tx, e.seq LIMIT $1) o
        CROSS JOIN LATERAL (SELECT max(p.tx + 0) FILTER (WHERE p.status = 'STREAM' AND p.tx + 0 > o.tx) AS wait_tx,
                                   max(p.seq + 0) FILTER (WHERE p.status = 'STREAM' AND p.tx + 0 > o.tx) AS wait_seq,
                                   coalesce(bool_or(p.status = 'PENDING'), false) AS behind
                            FROM outbox_events p
                            WHERE p.order_no = o.order_no AND p.seq + 0 < o.seq AND p.status IN ('STREAM', 'PENDING')
                              AND p.type IN ('ORDER_PAID', 'ORDER_CANCELLED', 'NOTIFY_SMS')) w
        ORDER BY o.tx, o.seq""";
  }

  /** {@link #streamRead} with every column the log line needs. */
  public static final String STREAM_READ = streamRead(
      "o.id, o.type, o.order_no, o.payload::text AS payload, o.attempts, o.created_at, o.exception_id");

  /** {@link #STREAM_READ} without the payload, for when the sink's logger is off and no sink type has a URL. */
  public static final String STREAM_READ_QUIET = streamRead("o.id, o.type, o.order_no");

  /**
   * The position moves to {@code ($1, $2)} and its lease ends, and the last mark moves with it unless that mark
   * was opened {@code $3} ms ago or more: then a new mark opens there (V18: at most one mark per {@code $3} ms; an
   * event's delivery time is its mark's, the last batch's {@code clock_timestamp()}, taken once in it: after the
   * read that saw the events, where {@code now()}, the transaction's start, can come before a writer that began
   * after it). {@code $4}: the relay's lease token (V20), the position moving only while it is there; NULL in the
   * transaction that read the batch, which holds the position locked. Answers {@code moved}: 0 when the lease was
   * lost (ran out, another relay took it).
   */
  public static final String STREAM_ADVANCE = """
      WITH t AS (SELECT clock_timestamp() AS at),
      moved AS (
          UPDATE outbox_stream SET tx = $1, seq = $2, at = (SELECT at FROM t), lease_token = NULL, lease_until = NULL
          WHERE id = 1 AND ($4::uuid IS NULL OR lease_token = $4::uuid) RETURNING at),
      last AS (
          SELECT m.tx, m.seq, m.opened FROM outbox_stream_marks m ORDER BY m.tx DESC, m.seq DESC LIMIT 1),
      kept AS (
          UPDATE outbox_stream_marks m SET tx = $1, seq = $2, at = t.at
          FROM last, moved, t WHERE m.tx = last.tx AND m.seq = last.seq
            AND last.opened > t.at - $3::bigint * interval '1 millisecond'
          RETURNING 1),
      opened AS (
          INSERT INTO outbox_stream_marks (tx, seq, at, opened)
          SELECT $1, $2, t.at, t.at FROM moved, t WHERE NOT EXISTS (SELECT 1 FROM kept))
      SELECT count(*) AS moved FROM moved""";

  /**
   * In the transaction that read a batch for webhooks (the position locked): the relay's lease on the position,
   * token {@code $1}, for {@code $2} ms (V20). Its POSTs run after the commit, outside any transaction.
   */
  public static final String STREAM_LEASE = """
      UPDATE outbox_stream SET lease_token = $1::uuid, lease_until = now() + $2::bigint * interval '1 millisecond'
      WHERE id = 1""";

  /** A lease given back unused (token {@code $1}): the relay stops, or its batch was not passed. */
  public static final String STREAM_RELEASE = """
      UPDATE outbox_stream SET lease_token = NULL, lease_until = NULL WHERE id = 1 AND lease_token = $1::uuid""";

  /**
   * The cursor's way past an event that waits ({@link #STREAM_READ}) for an earlier event of its order lying
   * beyond the batch: in the cursor's transaction (the position locked), order {@code $1}'s STREAM events past
   * the position up to seq {@code $2} become DELIVERED at once (one row version each, on a path taken rarely)
   * and are logged before commit; the cursor reads only STREAM events, so it passes over them later. Only when
   * all of them are of transactions below {@code $4} (the read's xmin, so all ended); otherwise nothing (the
   * relay waits for the horizon). {@code $3} is the relay. Written as {@link #streamRead}'s probe is, so it goes
   * by {@code outbox_order}, never from the position to the end of the backlog. With {@code $5} (a relay with
   * webhooks, whose POSTs never run inside a transaction) they leave the cursor instead: PENDING in lane RETRY,
   * due at once and not attempted, for the claim path to deliver in seq order ({@link #STREAM_DEMOTE}).
   */
  public static final String STREAM_AHEAD = """
      WITH c AS (SELECT s.tx, s.seq FROM outbox_stream s WHERE s.id = 1),
      ahead AS (
          SELECT p.id, p.tx FROM c CROSS JOIN LATERAL (
              SELECT x.id, x.tx FROM outbox_events x
              WHERE x.order_no = $1 AND x.seq + 0 <= $2 AND x.status = 'STREAM'
                AND (x.tx + 0, x.seq + 0) > (c.tx, c.seq)) p)
      UPDATE outbox_events o
      SET status = CASE WHEN $5::boolean THEN 'PENDING' ELSE 'DELIVERED' END,
          delivered_at = CASE WHEN $5::boolean THEN NULL ELSE (SELECT clock_timestamp()) END,
          attempts = CASE WHEN $5::boolean THEN o.attempts ELSE o.attempts + 1 END,
          next_attempt_at = CASE WHEN $5::boolean THEN greatest(now(), o.created_at + interval '1 millisecond')
              ELSE o.next_attempt_at END,
          claimed_by = $3
      FROM ahead WHERE o.id = ahead.id AND NOT EXISTS (SELECT 1 FROM ahead a WHERE a.tx >= $4)
      RETURNING o.id, o.seq, o.type, o.order_no, o.payload::text AS payload, o.attempts, o.created_at, o.exception_id,
                false AS behind""";

  /**
   * In the transaction that moves the position past them: STREAM events the cursor did not deliver
   * leave it for the claim path ({@code $1} ids; {@code $2} the error of each whose POST failed, NULL for one
   * not attempted: it waits behind its order's failed or pending event). A failed one counts its attempt, is
   * logged in {@code outbox_attempts} and backs off as {@link #MARK_FAILED} does ({@code $4} ms, at most
   * {@code $5}), or goes DEAD when {@code $3} attempts allow only one; one not attempted is due at once. Both
   * land in lane RETRY (their next attempt is after their creation), where the claim path finds them whatever
   * their xid and delivers each order's events in seq order. {@code $6} is the relay.
   */
  public static final String STREAM_DEMOTE = """
      WITH ev AS (
          UPDATE outbox_events o
          SET status = CASE WHEN x.error IS NOT NULL AND $3::int <= 1 THEN 'DEAD' ELSE 'PENDING' END,
              attempts = CASE WHEN x.error IS NULL THEN 0 ELSE 1 END,
              next_attempt_at = greatest(o.created_at + interval '1 millisecond', CASE WHEN x.error IS NULL THEN now()
                  ELSE now() + least($5::float8, $4::float8) * interval '1 millisecond' END),
              last_error = x.error, claimed_by = $6::text
          FROM unnest($1::uuid[], $2::text[]) AS x(id, error)
          WHERE o.id = x.id AND o.status = 'STREAM'
          RETURNING o.id, o.status, o.attempts, o.last_error)
      INSERT INTO outbox_attempts (event_id, attempt, relay, outcome, error)
      SELECT id, attempts, $6::text, CASE status WHEN 'DEAD' THEN 'DEAD' ELSE 'RETRY' END, last_error
      FROM ev WHERE last_error IS NOT NULL""";

  /**
   * Run before every relay statement in its transaction: a walk must go along its index
   * ({@code outbox_unstreamed_tx}, {@code outbox_retry}) in order and stop after LIMIT rows. Statistics of a table
   * that grows faster than autovacuum analyzes it (a backlog of 54,000 rows estimated at 320) made the planner pick a bitmap scan and a sort of the
   * whole backlog instead: 150 ms per claim against 2 ms, and a relay that fell behind fell further.
   * No sequential scan either, and a custom plan at every execution (about 1 ms of planning per batch):
   * the generic plan the server caches after five executions was made on the statistics of a nearly
   * empty table (a new database, before autovacuum's first ANALYZE of it). It probed the indexes with
   * filters instead of conditions, and with a backlog of 150,000 one batch took 10 s: the bench's relay
   * delivered almost nothing for minutes (issue 13). A custom plan sees the table's current size.
   */
  public static final String CLAIM_PLAN = "SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off; "
      + "SET LOCAL enable_seqscan = off; SET LOCAL plan_cache_mode = force_custom_plan";

  /**
   * Gives back claimed events that were not attempted ({@code $1} ids under claim token {@code $2}): an
   * earlier event of their order failed, so they wait behind it again (no attempt was counted; the next
   * {@link #FLOOR} moves them to lane RETRY behind it).
   */
  public static final String RELEASE = """
      UPDATE outbox_events SET claim_token = NULL, claimed_until = NULL
      WHERE id = ANY($1::uuid[]) AND claim_token = $2 AND status = 'PENDING'""";

  /**
   * The relay's new floor, from its floor {@code $1}: the lowest xid of a fresh pending event (walked along
   * {@code outbox_unstreamed_tx}), or of a transaction still running (the statement snapshot's xmin), whichever is
   * lower. No fresh event below it is pending, now or later: an event still uncommitted belongs to a
   * running transaction, whose xid is at or above that xmin. Of the first {@code $2} fresh pending events,
   * those waiting behind an event of their order in lane RETRY (a back-off of up to maxDelayMs) move to
   * that lane as well, so the floor does not stay behind them. When all {@code $2} wait, the floor goes no
   * further than the last one's xid; the next statement goes on from there. The floor is recorded in
   * {@code outbox_floor} (the highest any relay took) for readers without a relay: the view
   * {@code outbox_pending}, the console, the pending gauge.
   */
  public static final String FLOOR = """
      WITH first AS (
          SELECT e.id, e.tx, e.order_no, e.seq FROM outbox_events e
          WHERE e.tx >= $1 AND e.lane IS NULL AND e.status = 'PENDING'
          ORDER BY e.tx, e.seq LIMIT $2),
      waiting AS (
          UPDATE outbox_events o SET next_attempt_at = greatest(o.next_attempt_at, o.created_at + interval '1 millisecond')
          FROM first f
          WHERE o.id = f.id AND o.status = 'PENDING' AND o.lane IS NULL
            AND EXISTS (SELECT 1 FROM outbox_events r
                        WHERE r.order_no = f.order_no AND r.seq < f.seq AND r.lane = 'RETRY')
          RETURNING o.id),
      taken AS (
          SELECT least(pg_snapshot_xmin(pg_current_snapshot())::text::bigint,
                       (SELECT min(f.tx) FROM first f WHERE f.id NOT IN (SELECT id FROM waiting)),
                       CASE WHEN (SELECT count(*) FROM first) >= $2 THEN (SELECT max(tx) FROM first) END) AS lo),
      recorded AS (
          UPDATE outbox_floor SET lo = greatest(outbox_floor.lo, taken.lo) FROM taken WHERE id = 1)
      SELECT lo, (SELECT count(*) FROM waiting) AS moved FROM taken""";

  /** The highest floor recorded: where a starting relay's walk begins. */
  public static final String LOAD_FLOOR = "SELECT coalesce((SELECT lo FROM outbox_floor WHERE id = 1), 0) AS lo";

  /**
   * Marks deliveries ({@code $1} ids, {@code $2} their claim tokens, {@code $4} 1 where the claim did
   * not count the attempt), each only under the claim
   * that made it (a relay whose lease ran out marks nothing). A delivered refund request confirms its exception: REFUND_PENDING -> REFUNDED, with
   * history, in the same statement. {@code $3} is the relay.
   */
  public static final String MARK_DELIVERED = """
      WITH ev AS (
          UPDATE outbox_events o
          SET status = 'DELIVERED', delivered_at = now(), claim_token = NULL, claimed_until = NULL, last_error = NULL,
              attempts = o.attempts + x.uncounted
          FROM unnest($1::uuid[], $2::uuid[], $4::int[]) AS x(id, token, uncounted)
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
   * A failed attempt ({@code $8}: 1 when the claim did not count it, an event behind its order's head):
   * back off exponentially ({@code $5} * 2^(attempts-1), at most {@code $6} ms),
   * or DEAD once {@code $4} attempts are used. A dead refund request fails its exception:
   * REFUND_PENDING -> REFUND_FAILED, with history. {@code $3} is the error, {@code $7} the relay.
   */
  public static final String MARK_FAILED = """
      WITH ev AS (
          UPDATE outbox_events
          SET status = CASE WHEN attempts + $8 >= $4 THEN 'DEAD' ELSE 'PENDING' END,
              next_attempt_at = CASE WHEN attempts + $8 >= $4 THEN next_attempt_at
                  ELSE now() + least($6::float8, $5::float8 * power(2::float8, attempts + $8 - 1)) * interval '1 millisecond' END,
              attempts = attempts + $8,
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
   * refund request fails its exception. {@code $2} is the relay; {@code $3} its floor (the fresh events
   * are walked from it, those in lane RETRY along their index).
   */
  public static final String EXHAUST = """
      WITH ev AS (
          UPDATE outbox_events
          SET status = 'DEAD', claim_token = NULL, claimed_until = NULL,
              last_error = coalesce(last_error, 'the last attempt was never answered within its lease')
          WHERE id IN (SELECT id FROM outbox_events WHERE lane = 'RETRY'
                       UNION ALL
                       SELECT id FROM outbox_events WHERE tx >= $3 AND lane IS NULL AND status = 'PENDING')
            AND status = 'PENDING' AND attempts >= $1 AND claimed_until <= now()
          RETURNING id, status, exception_id, attempts),
      """ + refundFailed("$2", "'the last attempt was never answered within its lease'") + """

      SELECT count(*) AS n FROM ev""";

  /**
   * Where {@link #PRUNE_DELIVERED}'s walk stops, taken once per prune: the seq of the first event, in seq order,
   * written within the last {@code $1} seconds, or past the last event when none was. An event delivered before
   * then was written before then ({@code delivered_at >= created_at}), so below this seq lie all of them but
   * those whose transaction started before the bound's and wrote later (seq is taken at the insert,
   * {@code created_at} at the transaction's start): they are the next prune's. The walk along the seq index
   * reads the events older than the retention and stops at the first one within it (issue 13: without a bound,
   * a prune that found nothing more to delete read every event kept, 72 hours of them by default).
   */
  public static final String PRUNE_DELIVERED_BOUND = """
      SELECT coalesce(
          (SELECT e.seq FROM outbox_events e WHERE e.created_at >= now() - $1::float8 * interval '1 second'
           ORDER BY e.seq LIMIT 1),
          (SELECT max(e.seq) + 1 FROM outbox_events e),
          0) AS upto""";

  /**
   * One batch of the retention: up to {@code $2} delivered events older than {@code $1} seconds, oldest
   * first along the seq index below {@code $3} ({@link #PRUNE_DELIVERED_BOUND}: the walk stops there, or after
   * LIMIT rows); refund requests stay. Short, so it holds its row locks only briefly; rows another pruner
   * holds are skipped.
   */
  public static final String PRUNE_DELIVERED = """
      DELETE FROM outbox_events WHERE id IN (
          SELECT id FROM outbox_events
          WHERE seq < $3::bigint AND status = 'DELIVERED' AND type <> 'REFUND_REQUESTED'
            AND delivered_at < now() - $1::float8 * interval '1 second'
          ORDER BY seq LIMIT $2
          FOR UPDATE SKIP LOCKED)""";

  /**
   * The retention of STREAM events (V18): up to {@code $2} of them at or below the last mark older than
   * {@code $1} seconds (delivered before then), oldest first along {@code outbox_stream_tx}.
   */
  public static final String PRUNE_STREAMED = """
      DELETE FROM outbox_events WHERE id IN (
          SELECT e.id
          FROM (SELECT m.tx, m.seq FROM outbox_stream_marks m
                WHERE m.at < now() - $1::float8 * interval '1 second' ORDER BY m.at DESC LIMIT 1) b
          CROSS JOIN LATERAL (SELECT x.id FROM outbox_events x
                              WHERE (x.tx, x.seq) <= (b.tx, b.seq) AND x.lane = 'STREAM'
                              ORDER BY x.tx, x.seq LIMIT $2
                              FOR UPDATE SKIP LOCKED) e)""";

  /**
   * After {@link #PRUNE_STREAMED} came back short: the marks older than {@code $1} seconds, but the newest of
   * them (the next prune's bound, and the delivery time of the events at or below it still there).
   */
  public static final String PRUNE_MARKS = """
      DELETE FROM outbox_stream_marks
      WHERE at < (SELECT max(m.at) FROM outbox_stream_marks m WHERE m.at < now() - $1::float8 * interval '1 second')""";

  /** After a large prune (never inside a transaction; concurrent writes go on meanwhile). */
  public static final String VACUUM = "VACUUM (ANALYZE) outbox_events";

  /**
   * Pending count and the age of the oldest pending event (0 when none), dead count, for the relay with
   * floor {@code $1} (under {@link #CLAIM_PLAN}): the fresh events walked from it, lane RETRY and lane DEAD
   * along their partial indexes (V13), and the STREAM events past the cursor's position (V18).
   * <p>The position enters as two InitPlan values, so the STREAM walk starts at it along {@code outbox_stream_tx}.
   * Written as a join with {@code outbox_stream} (never analyzed: the planner guesses 1,020 rows), the plan walked
   * every STREAM event the retention keeps and filtered each against the position afterwards: every delivered
   * event of the last {@code retentionHours}, at every gauge refresh (5 s). The bench's profile found it at
   * 230 to 340 ms a call over 390,000 events, 8 µs of PostgreSQL's CPU per callback (issue 13).
   */
  public static final String COUNT_PENDING = """
      SELECT p.n AS pending, COALESCE(p.oldest_s, 0) AS oldest_pending_s, d.n AS dead
      FROM (SELECT count(*) AS n, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest_s
            FROM (SELECT created_at FROM outbox_events WHERE tx >= $1 AND lane IS NULL AND status = 'PENDING'
                  UNION ALL
                  SELECT created_at FROM outbox_events WHERE lane = 'RETRY'
                  UNION ALL
                  SELECT x.created_at FROM outbox_events x
                  WHERE (x.tx, x.seq) > ((SELECT s.tx FROM outbox_stream s WHERE s.id = 1),
                                         (SELECT s.seq FROM outbox_stream s WHERE s.id = 1))
                    AND x.lane = 'STREAM') e) p,
           (SELECT count(*) AS n FROM outbox_events WHERE lane = 'DEAD') d""";

  // ---- admin ----------------------------------------------------------------------------------

  public static final String SELECT_EVENT = """
      SELECT id, seq, type, order_no, payload, status, attempts, next_attempt_at, last_error, created_at,
             delivered_at, exception_id
      FROM outbox_events_shown WHERE id = $1""";

  /**
   * A dead event goes back to pending with fresh attempts, in lane RETRY (its xid is below the relays'
   * floors); anything else is left alone.
   */
  public static final String RETRY_DEAD = """
      UPDATE outbox_events
      SET status = 'PENDING', attempts = 0, next_attempt_at = greatest(now(), created_at + interval '1 millisecond'),
          last_error = NULL,
          claim_token = NULL, claimed_until = NULL
      WHERE id = $1 AND status = 'DEAD'
      RETURNING id, seq, type, order_no, payload, status, attempts, next_attempt_at, last_error, created_at,
                delivered_at, exception_id""";
}
