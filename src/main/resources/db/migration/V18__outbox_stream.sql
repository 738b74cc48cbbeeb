-- Issue 13: the log sink delivers by a cursor instead of a status update per event.
--
-- An event the log sink will deliver is written with status STREAM (the writer's session says so:
-- ordergate.outbox_stream = on, set by a service whose every sink type goes to the log; see OutboxSql) and is
-- never updated again. The relay reads the committed STREAM events past a position (tx, seq) in outbox_tx
-- order, logs them, and moves the position: one row written per batch instead of one row version (and its
-- WAL) per event, and no row lock per order. An event is delivered when its (tx, seq) is at or below the
-- position. The relay reads only events of transactions below its snapshot's xmin, all of which have ended,
-- so no event can later commit behind the position.
--
-- Measured before it was built (docs/notes/issue-13-relay-performance.md, "delivery by a cursor"): the
-- callbacks' rate 7 % below the relay off, against 24 % below it with a status update per event.
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_status_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_status_check
    CHECK (status IN ('PENDING', 'DELIVERED', 'DEAD', 'STREAM'));

-- Lane STREAM (V13's generated lane, now with a fourth value): the cursor's walk goes along a partial index of
-- STREAM events only (an index insert more per event; the cursor, the pending view, the gauge and the retention
-- never step over other events), and the walks of the claim path (lane IS NULL) pass over no STREAM event.
-- The index names the lane, not the status: a delivery's update (PENDING -> DELIVERED) leaves the lane NULL,
-- so it stays HOT (V13); an index naming the status made half the relay's updates non-HOT
-- (OutboxHotUpdateTest). PostgreSQL 15 cannot change a generated column's expression: the column is made anew
-- (a rewrite of the table, as V13's was), and its two indexes with it.
DROP VIEW outbox_pending;
DROP FUNCTION outbox_pending_events();
ALTER TABLE outbox_events DROP COLUMN lane;
ALTER TABLE outbox_events ADD COLUMN lane text GENERATED ALWAYS AS (
    CASE WHEN status = 'DEAD' THEN 'DEAD'
         WHEN status = 'PENDING' AND next_attempt_at > created_at THEN 'RETRY'
         WHEN status = 'STREAM' THEN 'STREAM' END) STORED;
CREATE INDEX outbox_retry ON outbox_events (seq) WHERE lane = 'RETRY';
CREATE INDEX outbox_dead_lane ON outbox_events (seq) WHERE lane = 'DEAD';
CREATE INDEX outbox_stream_tx ON outbox_events (tx, seq) WHERE lane = 'STREAM';

-- The position: every STREAM event at or below (tx, seq) was logged. One row; a relay holds it locked
-- while its batch is logged, so two relays never log one batch at the same time.
CREATE TABLE outbox_stream (
    id  integer PRIMARY KEY CHECK (id = 1),
    tx  bigint NOT NULL,
    seq bigint NOT NULL,
    at  timestamptz NOT NULL
);
INSERT INTO outbox_stream VALUES (1, 0, 0, now());

-- When the position passed where: an event's delivery time is the time (at) of the first mark at or past
-- it, the last batch the mark took in. A relay opens a new mark at most every 100 ms and moves its last one
-- otherwise, so a mark stands for at most 100 ms of batches and there are at most ten a second, however
-- small the batches. The retention deletes events up to the last mark older than outbox.retentionHours,
-- then the marks below that one.
CREATE TABLE outbox_stream_marks (
    tx     bigint NOT NULL,
    seq    bigint NOT NULL,
    at     timestamptz NOT NULL,
    opened timestamptz NOT NULL,
    PRIMARY KEY (tx, seq)
);
CREATE INDEX outbox_stream_marks_at ON outbox_stream_marks (at);

-- The outbox as its readers see it (the console, the admin API, the pending view): a STREAM event shows as
-- DELIVERED at or below the position, with its mark's time and one attempt, and as PENDING past it.
CREATE VIEW outbox_events_shown AS
SELECT e.id, e.seq, e.type, e.order_no, e.payload, e.exception_id,
       CASE WHEN e.status <> 'STREAM' THEN e.status
            WHEN (e.tx, e.seq) <= (c.tx, c.seq) THEN 'DELIVERED' ELSE 'PENDING' END AS status,
       CASE WHEN e.status = 'STREAM' AND (e.tx, e.seq) <= (c.tx, c.seq) THEN 1 ELSE e.attempts END AS attempts,
       e.next_attempt_at, e.claim_token, e.claimed_by, e.claimed_until, e.last_error, e.created_at,
       CASE WHEN e.status <> 'STREAM' THEN e.delivered_at
            WHEN (e.tx, e.seq) <= (c.tx, c.seq) THEN
                coalesce((SELECT m.at FROM outbox_stream_marks m WHERE (m.tx, m.seq) >= (e.tx, e.seq)
                          ORDER BY m.tx, m.seq LIMIT 1), c.at) END AS delivered_at,
       e.tx, e.lane, coalesce(e.lane = 'STREAM', false) AS streamed
FROM outbox_events e CROSS JOIN outbox_stream c;

-- Every pending event, as before (V13, V14), and the STREAM events past the position, along outbox_stream_tx.
CREATE FUNCTION outbox_pending_events() RETURNS SETOF outbox_events_shown LANGUAGE plpgsql STABLE
    SET enable_seqscan = off SET enable_bitmapscan = off AS $$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT * FROM outbox_events_shown WHERE tx >= $1 AND lane IS NULL AND status = ''PENDING''
         UNION ALL
         SELECT * FROM outbox_events_shown WHERE lane = ''RETRY''
         UNION ALL
         SELECT * FROM outbox_events_shown WHERE (tx, seq) > ($2, $3) AND lane = ''STREAM'''
        USING coalesce((SELECT f.lo FROM outbox_floor f WHERE f.id = 1), 0),
              (SELECT s.tx FROM outbox_stream s WHERE s.id = 1), (SELECT s.seq FROM outbox_stream s WHERE s.id = 1);
END $$;
CREATE VIEW outbox_pending AS SELECT * FROM outbox_pending_events();
