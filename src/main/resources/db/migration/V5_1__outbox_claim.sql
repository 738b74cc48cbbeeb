-- Issue 13: the relay's claim walks pending events in seq order and stops after LIMIT rows, whatever
-- the planner's statistics say. The (next_attempt_at, seq) index let a misestimate (a table that grew
-- faster than autovacuum analyzed it) choose a bitmap scan and a sort of the whole backlog: 139 ms per
-- claim at 54,000 pending against 7 ms after ANALYZE, so a relay that fell behind fell further behind.
CREATE INDEX outbox_pending_seq ON outbox_events (seq) WHERE status = 'PENDING';
DROP INDEX outbox_pending_due;

-- A claim changes no indexed column (attempts, claim token, lease): with room on the page its new row
-- version is HOT, with no index entries.
ALTER TABLE outbox_events SET (fillfactor = 80);

-- The retention (outbox.retentionHours) deletes delivered events in batches: vacuum the table often
-- enough that their space is reused and its size stays flat.
ALTER TABLE outbox_events SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
