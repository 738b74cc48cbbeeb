-- Issue 14, defect 1: a non-final notification claimed the payment's idempotency key, so the later
-- SUCCESS for the same txn was answered as a duplicate and recorded nowhere.

-- Every verified delivery, one row per distinct content per (channel, txn): what the gateway said, how
-- often and when. Only verified notifications reach it (a forger cannot add rows), and the payload is cut
-- at a bounded size, so the table grows with real gateway traffic only. Reconcile proves from it that every
-- txn that ever reported SUCCESS was applied to a PAID order or is in an exception order.
CREATE TABLE payment_notifications (
    id              bigserial PRIMARY KEY,
    channel         text NOT NULL,
    txn_id          text NOT NULL,
    order_no        text NOT NULL,
    amount_cents    bigint NOT NULL,
    gateway_status  text NOT NULL,
    notification_id text,
    payload         text,
    deliveries      integer NOT NULL DEFAULT 1,
    first_at        timestamptz NOT NULL DEFAULT now(),
    last_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (channel, txn_id, gateway_status, order_no, amount_cents)
);

-- A SUCCESS duplicate whose order or amount differs from the first SUCCESS of its txn gets the first answer
-- and an exception order of its own (kind CONFLICTING_DUPLICATE, manual review): conflict_key tells them
-- apart ('' for the exception of the first SUCCESS itself, '<order_no>/<amount>' for a conflicting one).
ALTER TABLE exception_orders ADD COLUMN conflict_key text NOT NULL DEFAULT '';
ALTER TABLE exception_orders DROP CONSTRAINT exception_orders_channel_txn_id_key;
ALTER TABLE exception_orders ADD CONSTRAINT exception_orders_txn_key UNIQUE (channel, txn_id, conflict_key);
ALTER TABLE exception_orders DROP CONSTRAINT exception_orders_kind_check;
ALTER TABLE exception_orders ADD CONSTRAINT exception_orders_kind_check CHECK (kind IN
    ('LATE_AFTER_CANCEL', 'DOUBLE_PAYMENT', 'AMOUNT_MISMATCH', 'UNKNOWN_ORDER', 'CONFLICTING_DUPLICATE'));
ALTER TABLE exception_orders ADD CONSTRAINT exception_orders_conflict_check
    CHECK ((kind = 'CONFLICTING_DUPLICATE') = (conflict_key <> ''));
