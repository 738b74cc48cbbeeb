-- Trigger tiers (issue 12): the broker tier's transition source and outbox event, and payment reminders.

-- A cancellation made by a delayed timeout message (RabbitMQ tier) is logged as TIMEOUT_MESSAGE.
ALTER TABLE order_transitions DROP CONSTRAINT order_transitions_source_check;
ALTER TABLE order_transitions ADD CONSTRAINT order_transitions_source_check
    CHECK (source IN ('USER', 'OPERATOR', 'TIMEOUT_SWEEP', 'PAYMENT_CALLBACK', 'TIMEOUT_MESSAGE'));

-- ORDER_TIMEOUT: written by order creation when the broker tier is on; the relay hands it to the
-- broker publisher after commit. Its outbox key is '<orderNo>#timeout', so it never holds up its
-- order's other events (OutboxSql.INSERT_TIMEOUT_EVENTS).
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_type_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_type_check
    CHECK (type IN ('ORDER_PAID', 'ORDER_CANCELLED', 'NOTIFY_SMS', 'REFUND_REQUESTED', 'ORDER_TIMEOUT'));

-- At most one payment reminder per order, whoever triggers it (the scan on any instance, a Redis
-- expiry event on any instance): the primary key is the once-only guarantee.
CREATE TABLE payment_reminders (
    order_no    text PRIMARY KEY REFERENCES orders (order_no),
    trigger     text NOT NULL CHECK (trigger IN ('DB_SCAN', 'REDIS_EXPIRY')),
    instance_id text NOT NULL,
    due_at      timestamptz NOT NULL,
    sent_at     timestamptz NOT NULL DEFAULT now()
);
-- The reminder scan walks orders_pending_expiry (V1, partial on status = 'PENDING_PAYMENT') over the
-- window (now, now + beforeSeconds]; only pending orders are in it, so its size is the backlog.
