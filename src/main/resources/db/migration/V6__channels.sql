-- Real payment channels (issue 9): orders carry their currency; a receipt keeps the gateway's own
-- notification id and the verified payload (bounded); verified notifications that are not payments
-- (Alipay WAIT_BUYER_PAY, Stripe's other events, ...) are recorded once and change no order.

-- ISO 4217. The service writes orders.currency from its config on every insert; the default only
-- fills rows that existed before this migration.
ALTER TABLE orders ADD COLUMN currency text NOT NULL DEFAULT 'CNY' CHECK (currency ~ '^[A-Z]{3}$');

ALTER TABLE payment_receipts
    ADD COLUMN currency text,
    ADD COLUMN notification_id text,
    ADD COLUMN payload text CHECK (payload IS NULL OR length(payload) <= 16384);

CREATE TABLE channel_notifications (
    id              bigserial PRIMARY KEY,
    channel         text NOT NULL,
    notification_id text,
    event_type      text,
    order_no        text,
    payload         text CHECK (payload IS NULL OR length(payload) <= 16384),
    received_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (channel, notification_id)
);
