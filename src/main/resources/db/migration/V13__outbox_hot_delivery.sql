-- Issue 13: a delivery writes no index entry. Every index that named the status (the partial indexes of
-- pending and dead events) made each claim and each mark a non-HOT update: a new entry in every index of
-- the table, and the old version's entries left in the partial indexes for the relay's walks to step over
-- until a vacuum. Measured alone (200,000 events, delivered 500 at a time): 23 us per delivered event
-- with those indexes against 6 us once no index names a column the delivery changes (fillfactor 50: every
-- update HOT; at 80 only a quarter were, the page had no room for the new version).
--
-- Pending events are now found two ways, neither through the status:
--   * fresh events by the transaction that wrote them (tx, its xid): the relay keeps a floor, an xid below
--     which no fresh event is pending (the oldest xid still running, or the oldest fresh pending event's,
--     whichever is lower), and walks (tx, seq) from it. A transaction still running when the floor was taken
--     has an xid at or above it, so an event committed late is never passed over;
--   * events off the fresh path (an attempt failed and waits for its retry, given back behind a failed
--     event of its order, or DEAD) by lane, a column generated from the row itself, in two small partial
--     indexes. The first delivery of a fresh event leaves lane NULL, so its update stays HOT.

-- The xid of the transaction that wrote the event (the default; the table is rewritten once so the events
-- already there carry this migration's xid and are walked as fresh ones).
ALTER TABLE outbox_events ADD COLUMN tx bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);

ALTER TABLE outbox_events ADD COLUMN lane text GENERATED ALWAYS AS (
    CASE WHEN status = 'DEAD' THEN 'DEAD'
         WHEN status = 'PENDING' AND next_attempt_at > created_at THEN 'RETRY' END) STORED;

CREATE INDEX outbox_tx ON outbox_events (tx, seq);
-- An order's events, pending or not (a handful each): "is an earlier event of this order pending?"
CREATE INDEX outbox_order ON outbox_events (order_no, seq);
CREATE INDEX outbox_retry ON outbox_events (seq) WHERE lane = 'RETRY';
CREATE INDEX outbox_dead_lane ON outbox_events (seq) WHERE lane = 'DEAD';

DROP INDEX outbox_pending_seq;
DROP INDEX outbox_pending_order;
DROP INDEX outbox_dead;

-- Room on every page for the new versions of its rows (a claim and a mark: two per webhook event).
ALTER TABLE outbox_events SET (fillfactor = 50);

-- The highest floor any relay has taken: a floor stays valid as time goes on (a later transaction's xid is
-- higher), so readers without a relay of their own (the console, the pending gauge) start there.
CREATE TABLE outbox_floor (
    id integer PRIMARY KEY CHECK (id = 1),
    lo bigint NOT NULL
);
INSERT INTO outbox_floor VALUES (1, pg_current_xact_id()::text::bigint);

-- Every pending event: the fresh ones at or above the recorded floor, and those waiting for a retry. A
-- function, so that the floor reaches the planner as a value: as a subquery in a view it is unknown at
-- planning time, and the estimate (a third of the table) chose a sequential scan of the whole outbox.
CREATE FUNCTION outbox_pending_events() RETURNS SETOF outbox_events LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT * FROM outbox_events WHERE tx >= $1 AND lane IS NULL AND status = ''PENDING''
         UNION ALL
         SELECT * FROM outbox_events WHERE lane = ''RETRY'''
        USING coalesce((SELECT f.lo FROM outbox_floor f WHERE f.id = 1), 0);
END $$;

CREATE VIEW outbox_pending AS SELECT * FROM outbox_pending_events();
