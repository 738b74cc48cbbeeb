-- Issue 13: the view outbox_pending (the console's counts and list, the bench's backlog sampler) is planned
-- with the statistics of a table that changes faster than autovacuum analyzes it. Estimating the fresh
-- events above the recorded floor at a large share of the table, the planner chose a sequential scan of the
-- whole outbox: 80-120 ms per count under load, against 3 ms along outbox_tx. Like the relay's own
-- statements (OutboxSql.CLAIM_PLAN), the function now walks its indexes whatever the statistics say.
CREATE OR REPLACE FUNCTION outbox_pending_events() RETURNS SETOF outbox_events LANGUAGE plpgsql STABLE
    SET enable_seqscan = off SET enable_bitmapscan = off AS $$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT * FROM outbox_events WHERE tx >= $1 AND lane IS NULL AND status = ''PENDING''
         UNION ALL
         SELECT * FROM outbox_events WHERE lane = ''RETRY'''
        USING coalesce((SELECT f.lo FROM outbox_floor f WHERE f.id = 1), 0);
END $$;
