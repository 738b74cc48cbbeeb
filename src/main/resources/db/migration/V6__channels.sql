-- Real payment channels (issue 9): orders carry their currency; verified notifications that name no
-- transaction (Stripe's other event types, a WeChat Pay refund event) are recorded once per notification
-- id and change no order. (Non-final statuses of a transaction, e.g. Alipay WAIT_BUYER_PAY, go to the
-- gate and are recorded in payment_notifications, V5.)

-- ISO 4217. The service writes orders.currency from its config on every insert; the default only
-- fills rows that existed before this migration.
ALTER TABLE orders ADD COLUMN currency text NOT NULL DEFAULT 'CNY' CHECK (currency ~ '^[A-Z]{3}$');

-- The currency the payment was in (the gateway's notification id and verified payload are recorded
-- per delivery in payment_notifications, V5).
ALTER TABLE payment_receipts ADD COLUMN currency text;

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
