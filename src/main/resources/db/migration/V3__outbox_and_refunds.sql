-- Exception lifecycle (refund tiers, resolution, history) and the transactional outbox.

-- OPEN only exists inside the transaction that opens an exception: the same transaction routes it
-- to REFUND_PENDING (automatic refund) or MANUAL_REVIEW. REFUNDED and RESOLVED are final.
ALTER TABLE exception_orders
    ADD CONSTRAINT exception_orders_status_check CHECK (status IN
        ('OPEN', 'MANUAL_REVIEW', 'REFUND_PENDING', 'REFUNDED', 'REFUND_FAILED', 'RESOLVED')),
    ADD COLUMN resolution      text CHECK (resolution IN ('REFUNDED_MANUALLY', 'ORDER_REINSTATED', 'DISMISSED')),
    ADD COLUMN resolved_by     text,
    ADD COLUMN resolution_note text,
    ADD COLUMN resolved_at     timestamptz,
    ADD CONSTRAINT exception_orders_resolved_check CHECK ((status = 'RESOLVED') = (resolution IS NOT NULL));
CREATE INDEX exception_orders_kind ON exception_orders (kind, id);

-- Every step of an exception, written in the transaction that took it.
CREATE TABLE exception_history (
    id           bigserial PRIMARY KEY,
    exception_id bigint NOT NULL REFERENCES exception_orders (id),
    event        text NOT NULL CHECK (event IN ('OPENED', 'MANUAL_REVIEW', 'REFUND_REQUESTED', 'REFUND_CONFIRMED',
                                                'REFUND_FAILED', 'REFUND_RETRIED', 'RESOLVED')),
    from_status  text,
    to_status    text NOT NULL,
    actor        text NOT NULL,
    detail       text,
    at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX exception_history_exception ON exception_history (exception_id, id);

-- The outbox: side effects that leave the database, written by the winning transaction.
-- id is the Idempotency-Key the receiver sees; seq orders events (per order number).
-- A row is claimed by setting claim_token/claimed_until (a lease) in a short transaction; a relay that
-- dies mid-delivery leaves the lease to expire and the event is delivered again (at least once).
CREATE TABLE outbox_events (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    type            text NOT NULL CHECK (type IN ('ORDER_PAID', 'ORDER_CANCELLED', 'NOTIFY_SMS', 'REFUND_REQUESTED')),
    order_no        text NOT NULL,
    payload         jsonb NOT NULL,
    exception_id    bigint REFERENCES exception_orders (id),
    status          text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'DEAD')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    claim_token     uuid,
    claimed_by      text,
    claimed_until   timestamptz,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    CHECK ((status = 'DELIVERED') = (delivered_at IS NOT NULL)),
    CHECK ((type = 'REFUND_REQUESTED') = (exception_id IS NOT NULL))
);
-- The relay's claim: only undelivered events are in these, so their size is the backlog. The claim
-- walks outbox_pending_due in its ORDER BY order and stops after LIMIT rows (no sort of the backlog);
-- outbox_pending_order answers "is an earlier event of this order pending?" per row.
CREATE INDEX outbox_pending_due ON outbox_events (next_attempt_at, seq) WHERE status = 'PENDING';
CREATE INDEX outbox_pending_order ON outbox_events (order_no, seq) WHERE status = 'PENDING';
-- GET /admin/outbox?status=...
CREATE INDEX outbox_status ON outbox_events (status, seq);
CREATE INDEX outbox_order ON outbox_events (order_no, seq);
-- At most one refund request per exception.
CREATE UNIQUE INDEX outbox_one_refund ON outbox_events (exception_id) WHERE type = 'REFUND_REQUESTED';
