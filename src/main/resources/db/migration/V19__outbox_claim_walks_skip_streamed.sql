-- Issue 13: the claim path's walks pass over no STREAM event, as V18 meant them to.
--
-- The walks of the claim path and of the floor (OutboxSql.heads' fresh walk, FLOOR, EXHAUST's floor, the pending
-- view and COUNT_PENDING) all read "tx >= floor AND lane IS NULL AND status = 'PENDING'" in (tx, seq) order.
-- V18 left them on outbox_tx, an index of every event, so each walk read past every STREAM event written since
-- the floor and dropped it by its lane. With the log sink's events on the cursor, nothing on the claim path is
-- pending, the floor moves up to the snapshot's xmin at each call, and each call walked everything written
-- since the last one: pg_stat_statements in a closed loop at 10,600 callbacks/s (log sink, 20 s) counted the
-- three walking statements at 2 to 4.4 ms a call, about 3.8 µs of database time per callback; one walk over
-- 44,900 STREAM events took 38 ms and 5,706 buffers, 0.05 ms and 5 buffers along this index.
--
-- The index names the lane only, as V18's do: a delivery's update (PENDING -> DELIVERED) leaves the lane NULL and
-- stays HOT (V13, OutboxHotUpdateTest). A STREAM event is no longer in any (tx, seq) index but outbox_stream_tx:
-- one index insert fewer per event for the gate's transaction.
CREATE INDEX outbox_unstreamed_tx ON outbox_events (tx, seq) WHERE lane IS NULL;
DROP INDEX outbox_tx;
