-- bench/cursor_probe.py: what delivering the outbox by a cursor would cost (issue 13), run by one pgbench
-- client beside the service with its relay off. Each transaction reads the committed events past the cursor
-- in (tx, seq) order, only those of transactions below the snapshot's xmin (every one of them has ended, so
-- none can still commit behind the cursor), and moves the cursor past them: one row written per batch
-- instead of a row version per event. The events are read and dropped, as the log sink does with its logger
-- off. Not the relay: no per-order chains, no retries, no sinks; a yardstick for the design.
SELECT tx AS ctx, seq AS cseq FROM outbox_cursor_probe WHERE id = 1 \gset
BEGIN;
WITH batch AS (
    SELECT e.tx, e.seq, e.type, e.order_no FROM outbox_events e
    WHERE (e.tx, e.seq) > (:ctx, :cseq) AND e.tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
      -- With -D ordered=1, the price of keeping an order's events in seq order: a probe per event for an earlier
      -- event of its order that comes later by xid, so is still ahead of the cursor. The probe only reads; such an
      -- event is left out of the batch (a relay would deliver the earlier one ahead of the cursor first).
      AND (:ordered = 0 OR NOT EXISTS (SELECT 1 FROM outbox_events p
                                       WHERE p.order_no = e.order_no AND p.seq < e.seq AND p.tx > e.tx))
    ORDER BY e.tx, e.seq LIMIT 1000),
last AS (
    SELECT tx, seq, (SELECT count(*) FROM batch) AS n FROM batch ORDER BY tx DESC, seq DESC LIMIT 1)
UPDATE outbox_cursor_probe c SET tx = last.tx, seq = last.seq, events = c.events + last.n, moved_at = clock_timestamp()
FROM last WHERE c.id = 1;
COMMIT;
\sleep 20 ms
